package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestJobWaitsForItsUpstream: a real admin process on MariaDB and an
// executor; job e2e/report waits for job e2e/load (wait_for). A run of
// report triggered by hand stays pending, saying what it waits for, while
// load has no succeeded run of the day; once load's run of the day
// succeeded, report's run starts at the hold's next re-check
// (--hold-recheck 1s) and succeeds. The lag is logged, not asserted: it
// is a figure, and the machine is shared.
func TestJobWaitsForItsUpstream(t *testing.T) {
	t.Parallel()
	secret := protocol.NewSecret()
	a := serveAdmin(t, secret, "--db-driver", "mysql", "--db-dsn", testenv.MySQL(t), "--heartbeat-interval", "500ms", "--hold-recheck", "1s")
	c := harness.NewClient(a.URL)
	c.HTTP = &http.Client{Timeout: 2 * time.Minute}
	require.NoError(t, c.Login(context.Background(), "admin", a.Password(t)))
	harness.StartExecutor(t, harness.ExecutorOpts{
		App: "e2e", Admins: c.Base, Capacity: 2, Heartbeat: 500 * time.Millisecond, Secret: secret, StartTimeout: 60 * time.Second,
	})
	create := func(spec map[string]any) apitypes.Job {
		t.Helper()
		var j apitypes.Job
		code, err := c.Call(context.Background(), http.MethodPost, "/api/v1/jobs", spec, &j)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, code)
		return j
	}
	trigger := func(id int64) int64 {
		t.Helper()
		var out struct{ Run apitypes.Run }
		code, err := c.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/trigger", id), map[string]any{}, &out)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, code)
		return out.Run.ID
	}
	run := func(id int64) apitypes.Run {
		t.Helper()
		var out struct{ Run apitypes.Run }
		require.NoError(t, c.Do(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", id), nil, &out))
		return out.Run
	}
	load := create(map[string]any{"app": "e2e", "name": "load", "handler": "demo.hello", "cron": "0 3 * * *", "params": "records=1"})
	report := create(map[string]any{"app": "e2e", "name": "report", "handler": "demo.hello", "cron": "0 4 * * *", "params": "records=1",
		"wait_for": []any{map[string]any{"job": map[string]any{"name": "load"}}}})
	require.Equal(t, "24h", report.WaitTimeout)

	waiting := trigger(report.ID)
	var held apitypes.Run
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		held = run(waiting)
		return strings.HasPrefix(held.Error, "waiting for e2e/load of business date "), nil
	}, "the run says what it waits for")
	require.Equal(t, "pending", held.Status)
	t.Logf("held: %s", held.Error)

	up := trigger(load.ID)
	var upRun apitypes.Run
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		upRun = run(up)
		return upRun.Status == "succeeded", nil
	}, "load's run succeeded")
	require.Equal(t, "pending", run(waiting).Status, "not started before its upstream succeeded")
	var done apitypes.Run
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		done = run(waiting)
		return done.Status == "succeeded", nil
	}, "report's run succeeded after load's")
	require.NotNil(t, done.StartedAt)
	require.NotNil(t, upRun.FinishedAt)
	lag := done.StartedAt.Sub(*upRun.FinishedAt)
	require.False(t, done.StartedAt.Before(*upRun.FinishedAt), "started %s, before its upstream ended %s", done.StartedAt, upRun.FinishedAt)
	require.Empty(t, done.Error)
	t.Logf("report's run started %s after load's run succeeded", lag.Round(time.Millisecond))
}
