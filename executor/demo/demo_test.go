package demo_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/executor/demo"
	"github.com/shardjob/shardjob/sdk"
)

func TestNoopReturnsAtOnceSilently(t *testing.T) {
	var out testenv.Buffer
	tk := task(3, 8, "records=5", &out)
	require.NoError(t, demo.Noop(context.Background(), tk))
	processed, skipped, failed, uncertain := tk.Counts()
	require.Zero(t, processed+skipped+failed+uncertain, "no records reported")
	require.Empty(t, out.String(), "nothing logged")

	// It does not look at its context either: a cancelled slot that
	// reached the handler still ends without an error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, demo.Noop(ctx, tk))
}

func TestRegisterAddsNoop(t *testing.T) {
	ex, err := sdk.New(sdk.Config{App: "demo", Admins: []string{"http://127.0.0.1:1"}, Secret: "0123456789abcdef0123456789abcdef"})
	require.NoError(t, err)
	demo.Register(ex)
	// Handle panics on a name that is taken: demo.noop is registered.
	require.Panics(t, func() { ex.Handle("demo.noop", demo.Noop) })
}

// demo.sum adds "add" to its parents' sums (the workflow context's
// upstream), one-slot results and results by slot alike, and returns the
// total as its result.
func TestSumAddsUpstreamResults(t *testing.T) {
	var out testenv.Buffer
	tk := task(0, 1, `{"add":10}`, &out)
	tk.Workflow = &sdk.WorkflowContext{RunID: 3, Node: "c", BusinessDate: "2026-03-02", Upstream: map[string]json.RawMessage{
		"a": json.RawMessage(`{"sum":2}`), "b": json.RawMessage(`{"0":{"sum":3},"1":{"sum":4}}`)}}
	require.NoError(t, demo.Sum(context.Background(), tk))
	require.JSONEq(t, `{"sum":19}`, string(tk.Result()))
	require.Contains(t, out.String(), "sum=19")

	root := task(0, 1, `{"add":5}`, &out)
	require.NoError(t, demo.Sum(context.Background(), root))
	require.JSONEq(t, `{"sum":5}`, string(root.Result()))

	require.ErrorContains(t, demo.Sum(context.Background(), task(0, 1, "add=5", &out)), "params must be a JSON object")
	none := task(0, 1, "", &out)
	require.NoError(t, demo.Sum(context.Background(), none), "no params: add 0")
	require.JSONEq(t, `{"sum":0}`, string(none.Result()))

	bad := task(0, 1, "", &out)
	bad.Workflow = &sdk.WorkflowContext{Upstream: map[string]json.RawMessage{"a": json.RawMessage(`[1]`)}}
	require.ErrorContains(t, demo.Sum(context.Background(), bad), "result of a")
	require.Nil(t, bad.Result())
}
