package scheduler_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/alarm"
	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
)

// TestFailedRunOf1024SlotsIsOneAlarmGroupAndOneMessage is the report that
// one failed 1024-slot run raised 1,025 alarms, each a row of its own: the
// run fails on the real database through the scheduler (every slot refused
// by its executor, no retry), which raises 1,024 slot_dead and one
// run_failed in the transactions that decide them; they are one group of
// 1,025, and a real local webhook receiver gets exactly one request for it.
func TestFailedRunOf1024SlotsIsOneAlarmGroupAndOneMessage(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		s, err := scheduler.New(scheduler.Config{ID: "test", Clock: c, DispatchTimeout: 30 * time.Second}, st, &fakePusher{refuse: true})
		require.NoError(t, err)
		claim(t, st, 1)
		online(t, st, store.ExecutorInfo{InstanceID: "a", App: "app", Address: "http://127.0.0.1:1", Capacity: 2000, Handlers: []string{"h"}})
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "wide", Handler: "h", Cron: "0 0 1 1 *", SlotCount: 1024}}, t0)
		r := pendingRun(t, st, j.ID, t0.UnixMilli(), store.TriggerManual, 1024)
		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		_, err = st.DB().Exec(`UPDATE slot_attempt SET dispatched_at = dispatched_at - 60000 WHERE current = 1`)
		require.NoError(t, err)
		var run store.Run
		for range 3 { // at most 1,000 attempts per pass
			require.NoError(t, s.FailUnacknowledged(ctx))
			run, err = st.Run(ctx, r.ID)
			require.NoError(t, err)
			if run.Status != store.RunRunning {
				break
			}
		}
		require.Equal(t, store.RunFailed, run.Status)
		require.Equal(t, 1024, count(t, st, `SELECT COUNT(*) FROM alarm_event WHERE kind = 'slot_dead' AND run_id = ?`, r.ID))
		require.Equal(t, 1, count(t, st, `SELECT COUNT(*) FROM alarm_event WHERE kind = 'run_failed' AND run_id = ?`, r.ID))

		groups, err := st.AlarmGroups(ctx, store.AlarmFilter{}, 0, 50)
		require.NoError(t, err)
		require.Len(t, groups, 1, "one group for the run")
		g := groups[0]
		require.Equal(t, 1025, g.Count)
		require.Equal(t, 1025, g.Open)
		require.Equal(t, "critical", g.Severity)
		require.Equal(t, []store.AlarmCount{{Kind: store.AlarmSlotDead, N: 1024}, {Kind: store.AlarmRunFailed, N: 1}}, g.Kinds)
		require.Equal(t, store.AlarmRunFailed, g.Latest.Kind, "the run's verdict, raised last, stands for the group")

		var requests atomic.Int64
		var last atomic.Value
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			last.Store(string(b))
			requests.Add(1)
		}))
		defer recv.Close()
		hook, err := alarm.NewWebhook(recv.URL, "a-webhook-secret-of-16+", 5*time.Second)
		require.NoError(t, err)
		n, err := alarm.New(alarm.Config{ID: "a1", Channels: []alarm.Endpoint{{Name: "ops", Type: alarm.TypeWebhook, Default: true, Channel: hook}},
			Clock: c, Window: time.Minute, MaxAge: 24 * 365 * time.Hour}, st)
		require.NoError(t, err)
		for range 3 { // three windows: nothing comes after the first message
			_, err := n.RunOnce(ctx)
			require.NoError(t, err)
			c.Advance(2 * time.Minute)
		}
		require.Equal(t, int64(1), requests.Load(), "one message for the group")
		require.Contains(t, last.Load(), `"group_id":`+strconv.FormatInt(g.ID, 10))
		require.Equal(t, 1, count(t, st, `SELECT COUNT(*) FROM alarm_delivery`), "the other 1,024 alarms follow the first: no delivery")

		// The whole group resolved in one statement: all 1,025 rows change.
		changed, err := st.ChangeAlarms(ctx, store.AlarmActionResolve, store.AlarmFilter{GroupIDs: []int64{g.ID}}, "ops")
		require.NoError(t, err)
		require.Equal(t, int64(1025), changed)
		require.Equal(t, 1025, count(t, st, `SELECT COUNT(*) FROM alarm_event WHERE group_id = ? AND resolved_by = 'ops'`, g.ID))
	})
}
