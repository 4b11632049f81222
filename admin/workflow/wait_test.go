package workflow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// waiting is "load>settle" in app billing, settle waiting for a job and a
// workflow.
func waiting(timeout string, on OnTimeout) Definition {
	d := spec(Continue, "load>settle")
	d.App = "billing"
	d.Nodes[1].WaitFor = []WaitRef{
		{Job: &NameRef{Name: "load-trades"}},
		{Workflow: &NameRef{App: "market-data", Name: "fx-close"}},
	}
	d.Nodes[1].WaitTimeout, d.Nodes[1].OnTimeout = timeout, on
	return d
}

func TestWaitDefaults(t *testing.T) {
	t.Parallel()
	got := waiting("", "").WithDefaults()
	require.Equal(t, DefaultWaitTimeout, got.Nodes[1].WaitTimeout)
	require.Equal(t, TimeoutFail, got.Nodes[1].OnTimeout)
	require.Equal(t, 24*time.Hour, got.Nodes[1].Timeout())
	require.Empty(t, got.Nodes[0].WaitTimeout, "a node that does not wait gets no timeout")
	require.Empty(t, got.Nodes[0].OnTimeout)
}

func TestValidateWaits(t *testing.T) {
	t.Parallel()
	_, err := Validate(waiting("2h30m", TimeoutSkip))
	require.NoError(t, err)

	for _, tc := range []struct {
		name  string
		edit  func(d *Definition)
		field string
		want  string
	}{
		{"neither job nor workflow", func(d *Definition) { d.Nodes[1].WaitFor[0] = WaitRef{} }, "nodes[1].wait_for[0]", "a job or a workflow"},
		{"both", func(d *Definition) { d.Nodes[1].WaitFor[0].Workflow = &NameRef{Name: "x"} }, "nodes[1].wait_for[0]", "not both"},
		{"no name", func(d *Definition) { d.Nodes[1].WaitFor[1].Workflow.Name = "" }, "nodes[1].wait_for[1].name", "required"},
		{"a bad app", func(d *Definition) { d.Nodes[1].WaitFor[1].Workflow.App = "Market Data" }, "nodes[1].wait_for[1].app", ""},
		{"itself", func(d *Definition) { d.Nodes[1].WaitFor[1].Workflow = &NameRef{Name: "wf"} }, "nodes[1].wait_for[1]", "its own run"},
		{"itself by app", func(d *Definition) { d.Nodes[1].WaitFor[1].Workflow = &NameRef{App: "billing", Name: "wf"} }, "nodes[1].wait_for[1]", "its own run"},
		{"its own job", func(d *Definition) { d.Nodes[1].Handler = ""; d.Nodes[1].Job = &JobRef{Name: "load-trades"} }, "nodes[1].wait_for[0]", "its own job billing/load-trades"},
		{"twice", func(d *Definition) {
			d.Nodes[1].WaitFor[1] = WaitRef{Job: &NameRef{App: "billing", Name: "load-trades"}}
		}, "nodes[1].wait_for[1]", "billing/load-trades is wait_for[0] already"},
		{"too many", func(d *Definition) { d.Nodes[1].WaitFor = make([]WaitRef, MaxWaits+1) }, "nodes[1].wait_for", "at most 20"},
		{"timeout not a duration", func(d *Definition) { d.Nodes[1].WaitTimeout = "tomorrow" }, "nodes[1].wait_timeout", "not a duration"},
		{"timeout negative", func(d *Definition) { d.Nodes[1].WaitTimeout = "-5m" }, "nodes[1].wait_timeout", "outside"},
		{"timeout too long", func(d *Definition) { d.Nodes[1].WaitTimeout = "169h" }, "nodes[1].wait_timeout", "outside"},
		{"bad setting", func(d *Definition) { d.Nodes[1].OnTimeout = "retry" }, "nodes[1].on_timeout", `"retry" is not a timeout setting`},
		{"timeout without waits", func(d *Definition) { d.Nodes[0].WaitTimeout = "1h" }, "nodes[0].wait_timeout", "only with wait_for"},
		{"setting without waits", func(d *Definition) { d.Nodes[0].OnTimeout = TimeoutSkip }, "nodes[0].on_timeout", "only with wait_for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := waiting("1h", TimeoutFail)
			d.Nodes[1].WaitFor = append([]WaitRef(nil), d.Nodes[1].WaitFor...)
			tc.edit(&d)
			_, err := Validate(d)
			var fe FieldErrors
			require.ErrorAs(t, err, &fe)
			require.Contains(t, fe, tc.field, "errors: %v", fe)
			require.Contains(t, fe[tc.field], tc.want)
		})
	}
}

func TestDecideWait(t *testing.T) {
	t.Parallel()
	g := mustGraph(t, waiting("2h", TimeoutSkip))
	since := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	deadline := since.Add(2 * time.Hour)

	w := g.DecideWait("settle", []bool{false, false}, since, since.Add(time.Minute))
	require.Equal(t, WaitKeep, w.Action)
	require.Equal(t, []string{"billing/load-trades", "workflow market-data/fx-close"}, w.Missing)
	require.Equal(t, "billing/load-trades, workflow market-data/fx-close", w.Reason())
	require.Equal(t, deadline, w.Deadline)

	w = g.DecideWait("settle", []bool{true, false}, since, deadline.Add(-time.Millisecond))
	require.Equal(t, WaitKeep, w.Action)
	require.Equal(t, []string{"workflow market-data/fx-close"}, w.Missing)

	w = g.DecideWait("settle", []bool{true, false}, since, deadline)
	require.Equal(t, WaitTimedOut, w.Action, "times out at the deadline")
	require.Equal(t, TimeoutSkip, w.OnTimeout)

	w = g.DecideWait("settle", []bool{true, true}, since, deadline.Add(time.Hour))
	require.Equal(t, WaitStart, w.Action, "a run that arrives late still starts the node if it is seen first")
	require.Empty(t, w.Missing)

	w = g.DecideWait("settle", nil, since, since)
	require.Equal(t, WaitKeep, w.Action, "no answer for a wait is not a success")
	require.Len(t, w.Missing, 2)
}

func TestDecideWithWaitingNodes(t *testing.T) {
	t.Parallel()
	// a waits; b is its child, c independent.
	for _, tc := range []struct {
		policy FailurePolicy
		states map[string]State
		ready  []string
		skip   []Skip
		ended  bool
	}{
		// A waiting node has not ended: its child waits too, and the run
		// is not finished.
		{Continue, map[string]State{"a": Waiting, "c": Succeeded}, nil, nil, false},
		{Continue, map[string]State{"a": Waiting, "c": Failed}, nil, nil, false},
		// Under stop, a failed node skips the waiting one (it never started).
		{Stop, map[string]State{"a": Waiting, "c": Failed}, nil,
			[]Skip{{Key: "a", Reason: SkipStopped, Cause: "c"}, {Key: "b", Reason: SkipStopped, Cause: "c"}}, true},
		{Stop, map[string]State{"a": Running, "c": Failed}, nil,
			[]Skip{{Key: "b", Reason: SkipStopped, Cause: "c"}}, false},
		{Continue, map[string]State{"a": Succeeded, "c": Succeeded}, []string{"b"}, nil, false},
	} {
		g := mustGraph(t, spec(tc.policy, "a>b c"))
		d := g.Decide(tc.states)
		require.Equal(t, tc.ready, d.Ready, "%v", tc.states)
		require.Equal(t, tc.skip, d.Skip, "%v", tc.states)
		require.Equal(t, tc.ended, d.Finished, "%v", tc.states)
		if tc.ended {
			require.Equal(t, RunFailed, d.Outcome.Status)
		}
		again := g.Decide(d.Apply(tc.states))
		require.Empty(t, again.Ready, "idempotent")
		require.Empty(t, again.Skip, "idempotent")
	}
}
