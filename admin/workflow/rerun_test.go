package workflow

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRerun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		policy   FailurePolicy
		spec     string
		states   string
		from     []string
		nodes    []string
		reopened []string
		next     string // the new states
		ready    []string
		err      error
		msg      string
	}{
		{"from a failed node: it and downstream", Continue, "a>b b>c a>d", "a=succeeded b=failed c=skipped d=succeeded", []string{"b"},
			[]string{"b", "c"}, nil, "a=succeeded b=pending c=pending d=succeeded", []string{"b"}, nil, ""},
		{"from a succeeded node", Continue, "a>b b>c", "a=succeeded b=succeeded c=succeeded", []string{"a"},
			[]string{"a", "b", "c"}, nil, "a=pending b=pending c=pending", []string{"a"}, nil, ""},
		{"from two nodes", Continue, "a>c b>c c>d", "a=failed b=failed c=skipped d=skipped", []string{"b", "a"},
			[]string{"a", "b", "c", "d"}, nil, "a=pending b=pending c=pending d=pending", []string{"a", "b"}, nil, ""},
		{"stop: nodes skipped by the stop are reopened", Stop, "a>b c>d", "a=failed b=skipped c=succeeded d=skipped", []string{"a"},
			[]string{"a", "b"}, []string{"d"}, "a=pending b=pending c=succeeded d=pending", []string{"a", "d"}, nil, ""},
		{"continue: a skip for a failure that stays stays", Continue, "a>b c>d x>y", "a=failed b=skipped c=failed d=skipped x=succeeded y=succeeded",
			[]string{"c"}, []string{"c", "d"}, nil, "a=failed b=skipped c=pending d=pending x=succeeded y=succeeded", []string{"c"}, nil, ""},
		{"an all_done node reopened after a stop", Stop, "a>b:all_done c", "a=succeeded b=skipped c=failed", []string{"c"},
			[]string{"c"}, []string{"b"}, "a=succeeded b=pending c=pending", []string{"b", "c"}, nil, ""},

		{"no node", Continue, "a", "a=failed", nil, nil, nil, "", nil, ErrUnknownNode, "rerun: unknown node: name the node(s) to re-run from"},
		{"unknown node", Continue, "a", "a=failed", []string{"q"}, nil, nil, "", nil, ErrUnknownNode,
			`rerun from "q": unknown node: no node has this key in workflow wf`},
		{"a run not finished", Continue, "a b", "a=failed b=running", []string{"a"}, nil, nil, "", nil, ErrNotFinished,
			"rerun: workflow run not finished: node b is running; wait for the run to end, or cancel it"},
		{"a node never decided is not finished", Continue, "a b", "a=failed", []string{"a"}, nil, nil, "", nil, ErrNotFinished,
			"rerun: workflow run not finished: node b is pending; wait for the run to end, or cancel it"},
		{"its parent failed and is not re-run", Continue, "a>b b>c", "a=failed b=skipped c=skipped", []string{"b"}, nil, nil, "", nil, ErrRerunBlocked,
			"rerun from b: rerun would skip its node at once: its parent a failed and is not re-run: re-run from a"},
		{"stop: another failed node is not re-run", Stop, "a b c", "a=failed b=failed c=skipped", []string{"a"}, nil, nil, "", nil, ErrRerunBlocked,
			"rerun from a: rerun would skip its node at once: node b failed and is not re-run, and the failure policy is stop: re-run from b as well"},
		{"stop: rerun from both", Stop, "a b c", "a=failed b=cancelled c=skipped", []string{"a", "b"},
			[]string{"a", "b"}, []string{"c"}, "a=pending b=pending c=pending", []string{"a", "b", "c"}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g := mustGraph(t, spec(c.policy, c.spec))
			st := states(c.states)
			plan, err := g.Rerun(st, c.from...)
			require.Equal(t, states(c.states), st, "the states are not changed")
			if c.err != nil {
				require.ErrorIs(t, err, c.err)
				require.EqualError(t, err, c.msg)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.nodes, plan.Nodes)
			require.Equal(t, c.reopened, plan.Reopened)
			require.Equal(t, states(c.next), plan.States)
			require.Equal(t, c.ready, g.Decide(plan.States).Ready)
			// A second rerun on the reopened run is refused.
			_, err = g.Rerun(g.Decide(plan.States).Apply(plan.States), c.from...)
			require.ErrorIs(t, err, ErrNotFinished)
		})
	}
}

// A rerun of the 20-node diamond from a failed middle node runs it and the
// fan-in again, once each.
func TestRerunDiamond20(t *testing.T) {
	t.Parallel()
	g := mustGraph(t, diamond20(Continue))
	st := map[string]State{}
	for _, k := range g.Order() {
		st[k] = Succeeded
	}
	st["b07"], st["z"] = Failed, Skipped
	require.Equal(t, RunFailed, g.Decide(st).Outcome.Status)
	plan, err := g.Rerun(st, "b07")
	require.NoError(t, err)
	require.Equal(t, []string{"b07", "z"}, plan.Nodes)
	d := g.Decide(plan.States)
	require.Equal(t, []string{"b07"}, d.Ready)
	next := d.Apply(plan.States)
	next["b07"] = Succeeded
	d = g.Decide(next)
	require.Equal(t, []string{"z"}, d.Ready)
	next = d.Apply(next)
	next["z"] = Succeeded
	require.Equal(t, Outcome{Status: RunSucceeded, Succeeded: 20}, g.Decide(next).Outcome)
}
