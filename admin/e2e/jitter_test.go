package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestJitteredRunsStartAtTheirOffset: a real admin process on MariaDB and
// an executor run a job firing every 10 s with an 8 s jitter window. Every
// run is keyed by its scheduled time (a multiple of 10 s), answers
// start_after = scheduled + the firing's offset (schedule.JitterOffset of
// the job's key), is started by the leader no earlier than that (its
// started_at and its first slot's start) and promptly after it (the leader
// wakes for a start_after), and succeeds.
func TestJitteredRunsStartAtTheirOffset(t *testing.T) {
	t.Parallel()
	secret := protocol.NewSecret()
	a := serveAdmin(t, secret, "--db-driver", "mysql", "--db-dsn", testenv.MySQL(t), "--heartbeat-interval", "500ms")
	c := harness.NewClient(a.URL)
	c.HTTP = &http.Client{Timeout: 2 * time.Minute}
	require.NoError(t, c.Login(context.Background(), "admin", a.Password(t)))
	harness.StartExecutor(t, harness.ExecutorOpts{
		App: "e2e", Admins: c.Base, Capacity: 2, Heartbeat: 500 * time.Millisecond, Secret: secret, StartTimeout: 60 * time.Second,
	})

	var job apitypes.Job
	code, err := c.Call(context.Background(), http.MethodPost, "/api/v1/jobs", map[string]any{"app": "e2e", "name": "jittered", "handler": "demo.hello",
		"cron": "*/10 * * * * *", "slots": 1, "params": "records=1", "jitter_window": "8s"}, &job)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	require.Equal(t, "8s", job.JitterWindow)

	var runs []apitypes.Run
	testenv.WaitFor(t, 90*time.Second, func() (bool, error) {
		var out struct{ Runs []apitypes.Run }
		if _, err := c.Call(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/runs?job_id=%d&status=succeeded&limit=50", job.ID), nil, &out); err != nil {
			return false, err
		}
		runs = out.Runs
		return len(runs) >= 3, nil
	}, "three runs of the jittered job succeeded")

	for _, listed := range runs {
		var out struct{ Run apitypes.Run }
		require.NoError(t, c.Do(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", listed.ID), nil, &out))
		r := out.Run
		require.Equal(t, "cron", r.Trigger)
		require.Zero(t, r.ScheduledAt.UnixMilli()%10_000, "run %d: the run key is the scheduled time %s", r.ID, r.ScheduledAt)
		require.NotNil(t, r.StartAfter, "run %d", r.ID)
		offset := schedule.JitterOffset("e2e/jittered", r.ScheduledAt, 8*time.Second)
		require.Equal(t, r.ScheduledAt.Add(offset), r.StartAfter.UTC(), "run %d", r.ID)
		require.NotNil(t, r.StartedAt)
		require.NotNil(t, r.FirstSlotStartedAt)
		require.False(t, r.StartedAt.Before(*r.StartAfter), "run %d started at %s, before its start_after %s", r.ID, r.StartedAt, r.StartAfter)
		require.False(t, r.FirstSlotStartedAt.Before(*r.StartAfter), "run %d: slot started at %s, before %s", r.ID, r.FirstSlotStartedAt, r.StartAfter)
		late := r.StartedAt.Sub(*r.StartAfter)
		require.Less(t, late, 3*time.Second, "run %d started %s after its start_after: the leader should wake for it", r.ID, late)
		t.Logf("run %d: scheduled %s, offset %s, started %s after start_after", r.ID, r.ScheduledAt.Format("15:04:05"), offset, late)
	}
}
