package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

// TestPrioritiesOrderAnExecutorsQueue: a real admin process on MariaDB and
// a real executor of capacity 1. While a slow run holds the executor, a low,
// a normal and a critical run are triggered in that order and queue on the
// executor; once the slow run ends they start critical, normal, low (by
// the attempts' own start times). A trigger asking for more than its job's
// priority is refused by field.
func TestPrioritiesOrderAnExecutorsQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, secret, _ := mysqlAdmin(t)
	harness.StartExecutor(t, harness.ExecutorOpts{
		App: "prio", Admins: c.Base, Capacity: 1, Heartbeat: 500 * time.Millisecond, Secret: secret, StartTimeout: 60 * time.Second,
	})
	create := func(name, prio, ms string) int64 {
		t.Helper()
		var j apitypes.Job
		code, err := c.Call(ctx, http.MethodPost, "/api/v1/jobs", map[string]any{
			"app": "prio", "name": name, "handler": "demo.sleep", "cron": "0 3 1 1 *", "params": "ms=" + ms, "priority": prio,
		}, &j)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, code, name)
		require.Equal(t, prio, j.Priority)
		return j.ID
	}
	var attempts []apitypes.Attempt
	attemptOf := func(runID int64) (apitypes.Attempt, bool) {
		t.Helper()
		var out struct {
			Attempts []apitypes.Attempt `json:"attempts"`
		}
		require.NoError(t, c.Do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", runID), nil, &out))
		attempts = out.Attempts
		if len(out.Attempts) == 0 {
			return apitypes.Attempt{}, false
		}
		return out.Attempts[len(out.Attempts)-1], true
	}
	// trigger starts a run of job id and waits until its slot is in state
	// (queued: on the executor, waiting for capacity).
	trigger := func(id int64, state string) int64 {
		t.Helper()
		var out struct{ Run apitypes.Run }
		code, err := c.Call(ctx, http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/trigger", id), map[string]any{}, &out)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, code)
		testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
			a, ok := attemptOf(out.Run.ID)
			return ok && a.Status == state, nil
		}, fmt.Sprintf("run %d's slot %s (attempts %+v)", out.Run.ID, state, attempts))
		return out.Run.ID
	}
	slow, low, normal, critical := create("slow", "normal", "2000"), create("bulk", "low", "50"), create("plain", "normal", "50"), create("urgent", "critical", "50")

	var refusal apitypes.ErrorView
	code, err := c.Call(ctx, http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/trigger", low), map[string]any{"priority": "high"}, &refusal)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "at most the job's priority (low): a trigger or backfill may lower it, not raise it", refusal.Fields["priority"])

	trigger(slow, "running")
	runs := []int64{trigger(low, "queued"), trigger(normal, "queued"), trigger(critical, "queued")}
	started := make([]int64, len(runs))
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		for i, id := range runs {
			a, ok := attemptOf(id)
			if !ok || a.Status != "succeeded" || a.StartedAt == nil {
				return false, nil
			}
			started[i] = a.StartedAt.UnixMilli()
		}
		return true, nil
	}, "the queued runs did not succeed")
	t.Logf("started (ms after the low run): critical %d, normal %d", started[2]-started[0], started[1]-started[0])
	require.Less(t, started[2], started[1], "critical before normal")
	require.Less(t, started[1], started[0], "normal before low")
}
