package workflow

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func skip(key string, reason SkipReason, cause string) Skip {
	return Skip{Key: key, Reason: reason, Cause: cause}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	const diamond = "a>b a>c b>d c>d"
	cases := []struct {
		name   string
		policy FailurePolicy
		spec   string
		states string
		ready  []string
		skip   []Skip
		status RunStatus // "" when not finished
	}{
		// Starting.
		{"a new run starts its roots", Stop, "a>b c>b d", "", []string{"a", "c", "d"}, nil, ""},
		{"a root starts whatever its rule", Stop, "a:one_success>b", "", []string{"a"}, nil, ""},
		{"nothing new while a root runs", Stop, diamond, "a=running", nil, nil, ""},
		{"fan out", Stop, diamond, "a=succeeded", []string{"b", "c"}, nil, ""},
		{"an unknown state counts as running", Stop, diamond, "a=queued", nil, nil, ""},
		{"keys that are not nodes are ignored", Stop, "a>b", "a=succeeded zz=failed", []string{"b"}, nil, ""},

		// all_success.
		{"all_success waits for every parent", Stop, diamond, "a=succeeded b=succeeded c=running", nil, nil, ""},
		{"all_success starts when every parent succeeded", Stop, diamond, "a=succeeded b=succeeded c=succeeded", []string{"d"}, nil, ""},
		{"all_success skipped on a failed parent, other parent running", Continue, diamond, "a=succeeded b=failed c=running",
			nil, []Skip{skip("d", SkipStartRule, "b")}, ""},
		{"all_success skipped on a skipped parent", Continue, "a>b b>c", "a=failed",
			nil, []Skip{skip("b", SkipStartRule, "a"), skip("c", SkipStartRule, "b")}, RunFailed},
		{"all_success skipped on a cancelled parent", Continue, diamond, "a=succeeded b=cancelled c=succeeded",
			nil, []Skip{skip("d", SkipStartRule, "b")}, RunFailed},

		// all_done.
		{"all_done waits for every parent", Continue, "a>c b>c:all_done", "a=failed b=running", nil, nil, ""},
		{"all_done starts when every parent ended, failed included", Continue, "a>c b>c:all_done", "a=failed b=succeeded", []string{"c"}, nil, ""},
		{"all_done starts after skipped parents, in the same pass", Continue, "a>b b>c:all_done", "a=failed",
			[]string{"c"}, []Skip{skip("b", SkipStartRule, "a")}, ""},
		{"all_done starts after cancelled parents", Continue, "a>b:all_done", "a=cancelled", []string{"b"}, nil, ""},

		// one_success.
		{"one_success starts on the first success, others running", Continue, "a>c b>c:one_success", "a=running b=succeeded", []string{"c"}, nil, ""},
		{"one_success waits while a parent may succeed", Continue, "a>c b>c:one_success", "a=failed b=running", nil, nil, ""},
		{"one_success skipped when every parent ended without success", Continue, "a>c b>c:one_success", "a=failed b=skipped",
			nil, []Skip{skip("c", SkipStartRule, "a")}, RunFailed},
		{"one_success after a skip in the same pass", Continue, "r>a r>b a>c b>c:one_success", "r=succeeded a=failed b=succeeded",
			[]string{"c"}, nil, ""},

		// Failure policy.
		{"stop skips every node not started", Stop, "a>b c>d e", "a=failed c=running e=succeeded",
			nil, []Skip{skip("b", SkipStopped, "a"), skip("d", SkipStopped, "a")}, ""},
		{"stop names the first failed node in topological order", Stop, "a>b c>d x>y", "a=succeeded c=cancelled b=failed",
			nil, []Skip{skip("d", SkipStopped, "b"), skip("x", SkipStopped, "b"), skip("y", SkipStopped, "b")}, RunFailed},
		{"stop skips an all_done clean-up too", Stop, "a>b:all_done", "a=failed", nil, []Skip{skip("b", SkipStopped, "a")}, RunFailed},
		{"stop starts nothing even when a rule is met", Stop, "a>b c", "a=succeeded c=failed", nil, []Skip{skip("b", SkipStopped, "c")}, RunFailed},
		{"continue lets independent branches go on", Continue, "a>b c>d", "a=failed c=succeeded",
			[]string{"d"}, []Skip{skip("b", SkipStartRule, "a")}, ""},

		// Finishing.
		{"succeeded", Stop, diamond, "a=succeeded b=succeeded c=succeeded d=succeeded", nil, nil, RunSucceeded},
		{"not finished while a node runs", Continue, "a b", "a=failed b=running", nil, nil, ""},
		{"partially failed: a leaf succeeded", Continue, "a>b c>d", "a=failed b=skipped c=succeeded d=succeeded", nil, nil, RunPartiallyFailed},
		{"failed: no leaf succeeded", Continue, diamond, "a=succeeded b=succeeded c=failed d=skipped", nil, nil, RunFailed},
		{"an all_done leaf that succeeded makes it partial", Continue, "a>b:all_done", "a=failed b=succeeded", nil, nil, RunPartiallyFailed},
		{"cancelled counts as failed", Stop, "a b", "a=cancelled b=succeeded", nil, nil, RunPartiallyFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g := mustGraph(t, spec(c.policy, c.spec))
			st := states(c.states)
			d := g.Decide(st)
			require.Equal(t, c.ready, d.Ready, "ready")
			require.Equal(t, c.skip, d.Skip, "skip")
			require.Equal(t, c.status != "", d.Finished, "finished")
			require.Equal(t, c.status, d.Outcome.Status)
			require.Equal(t, states(c.states), st, "the states are not changed")
			require.Equal(t, d, g.Decide(st), "the same states, the same decision")
			// Idempotent: deciding again on the decision applied yields
			// nothing new (or the same end).
			again := g.Decide(d.Apply(st))
			require.Empty(t, again.Ready)
			require.Empty(t, again.Skip)
			require.Equal(t, d.Finished, again.Finished)
			require.Equal(t, d.Outcome, again.Outcome)
		})
	}
}

func TestDecideOutcomeCounts(t *testing.T) {
	t.Parallel()
	g := mustGraph(t, spec(Continue, "a>b a>c c>d e f"))
	d := g.Decide(states("a=succeeded b=failed c=succeeded d=cancelled e=skipped f=succeeded"))
	require.True(t, d.Finished)
	require.Equal(t, Outcome{Status: RunPartiallyFailed, Succeeded: 3, Failed: 1, Cancelled: 1, Skipped: 1, FailedNodes: []string{"b", "d"}}, d.Outcome)
	require.False(t, d.Empty())
	require.True(t, g.Decide(states("a=running e=running f=running")).Empty())
}

// run simulates a whole run: decide, apply, end the running nodes with
// result (default succeeded), until the run finishes. It checks that every
// decision is idempotent and returns how many times each node started and
// the outcome.
func run(t *testing.T, g *Graph, result func(key string) State) (map[string]int, Outcome) {
	t.Helper()
	st := map[string]State{}
	started := map[string]int{}
	for step := 0; ; step++ {
		require.Less(t, step, 3*g.Len()+3, "the run does not end")
		d := g.Decide(st)
		for _, k := range d.Ready {
			started[k]++
		}
		st = d.Apply(st)
		again := g.Decide(st)
		require.True(t, again.Empty() || again.Finished, "a second decision on the same states: %+v", again)
		if d.Finished {
			return started, d.Outcome
		}
		// End the running nodes one layer at a time, so the run goes
		// through many intermediate states.
		for _, k := range g.Order() {
			if st[k] == Running {
				st[k] = result(k)
				break
			}
		}
	}
}

func TestRunDiamond20(t *testing.T) {
	t.Parallel()
	for _, policy := range []FailurePolicy{Stop, Continue} {
		g := mustGraph(t, diamond20(policy))
		require.Equal(t, 20, g.Len())
		started, o := run(t, g, func(string) State { return Succeeded })
		require.Len(t, started, 20)
		for k, n := range started {
			require.Equal(t, 1, n, "%s started %d times", k, n)
		}
		require.Equal(t, Outcome{Status: RunSucceeded, Succeeded: 20}, o)
	}

	// b05 fails: z (all_success) is skipped; under stop, the b's that had
	// not started are skipped too.
	fail := func(k string) State {
		if k == "b05" {
			return Failed
		}
		return Succeeded
	}
	g := mustGraph(t, diamond20(Continue))
	started, o := run(t, g, fail)
	require.Len(t, started, 19, "every node but z")
	require.Equal(t, Outcome{Status: RunFailed, Succeeded: 18, Failed: 1, Skipped: 1, FailedNodes: []string{"b05"}}, o)

	g = mustGraph(t, diamond20(Stop))
	started, o = run(t, g, fail)
	require.Len(t, started, 19, "the b's had all started when b05 failed")
	require.Equal(t, RunFailed, o.Status)

	// A clean-up fan-in with all_done runs whatever the b's did.
	d := diamond20(Continue)
	for i := range d.Nodes {
		if d.Nodes[i].Key == "z" {
			d.Nodes[i].Start = AllDone
		}
	}
	started, o = run(t, mustGraph(t, d), fail)
	require.Equal(t, 1, started["z"])
	require.Equal(t, Outcome{Status: RunPartiallyFailed, Succeeded: 19, Failed: 1, FailedNodes: []string{"b05"}}, o)
}

func TestRunLayered1000(t *testing.T) {
	t.Parallel()
	g := mustGraph(t, layered(10, 100))
	require.Equal(t, 1000, g.Len())
	st := map[string]State{}
	for layer := range 10 {
		d := g.Decide(st)
		require.Len(t, d.Ready, 100, "layer %d starts at once", layer)
		for _, k := range d.Ready {
			require.True(t, strings.HasPrefix(k, fmt.Sprintf("n%d_", layer)), k)
		}
		st = d.Apply(st)
		require.True(t, g.Decide(st).Empty())
		for _, k := range d.Ready {
			st[k] = Succeeded
		}
	}
	d := g.Decide(st)
	require.True(t, d.Finished)
	require.Equal(t, 1000, d.Outcome.Succeeded)

	// One failure in layer 0 under continue: its descendants are skipped in
	// one pass, the rest runs.
	st = map[string]State{}
	st = g.Decide(st).Apply(st)
	for k := range st {
		st[k] = Succeeded
	}
	st["n0_0"] = Failed
	d = g.Decide(st)
	require.Len(t, d.Skip, len(g.Downstream("n0_0"))-1)
	require.Len(t, d.Ready, 100-3, "n1_0, n1_63 and n1_99 wait for n0_0")
}
