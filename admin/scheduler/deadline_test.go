package scheduler_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
)

func TestDecideDeadlines(t *testing.T) {
	t.Parallel()
	at := func(ms int64) sql.NullInt64 { return sql.NullInt64{Int64: ms, Valid: true} }
	none := sql.NullInt64{}
	// Start deadline at 100, finish deadline at 200 (ms), both unchecked.
	both := func(status string, firstStarted, finished sql.NullInt64, action string) store.DueDeadline {
		return store.DueDeadline{Status: status, FirstStartedAt: firstStarted, FinishedAt: finished,
			RunDeadlines: store.RunDeadlines{StartDeadlineAt: at(100), FinishDeadlineAt: at(200), DeadlineAction: action, DeadlineCheckAt: at(100)}}
	}
	afterStart := func(r store.DueDeadline) store.DueDeadline { r.DeadlineCheckAt = at(200); return r }
	for _, tc := range []struct {
		name string
		run  store.DueDeadline
		now  int64
		want scheduler.DeadlineDecision
	}{
		{"started in time: only the finish deadline is left", both(store.RunRunning, at(90), none, store.DeadlineAlarm), 100,
			scheduler.DeadlineDecision{Next: at(200)}},
		{"started at the deadline is in time", both(store.RunRunning, at(100), none, store.DeadlineAlarm), 150,
			scheduler.DeadlineDecision{Next: at(200)}},
		{"not started: late", both(store.RunPending, none, none, store.DeadlineAlarm), 100,
			scheduler.DeadlineDecision{LateStart: true, Next: at(200)}},
		{"started after the deadline: late", both(store.RunRunning, at(101), none, store.DeadlineAlarm), 150,
			scheduler.DeadlineDecision{LateStart: true, Next: at(200)}},
		{"ended before the deadline without starting: not late", both(store.RunCancelled, none, at(50), store.DeadlineAlarm), 150,
			scheduler.DeadlineDecision{Next: at(200)}},
		{"finished in time: nothing left", afterStart(both(store.RunSucceeded, at(90), at(200), store.DeadlineCancel)), 200,
			scheduler.DeadlineDecision{}},
		{"still running: missed, alarm only", afterStart(both(store.RunRunning, at(90), none, store.DeadlineAlarm)), 201,
			scheduler.DeadlineDecision{Missed: true}},
		{"still running: missed and cancelled", afterStart(both(store.RunRunning, at(90), none, store.DeadlineCancel)), 201,
			scheduler.DeadlineDecision{Missed: true, Cancel: true}},
		{"finished late: missed, nothing to cancel", afterStart(both(store.RunFailed, at(90), at(250), store.DeadlineCancel)), 300,
			scheduler.DeadlineDecision{Missed: true}},
		{"both passed at once (leader was down)", both(store.RunPending, none, none, store.DeadlineCancel), 500,
			scheduler.DeadlineDecision{LateStart: true, Missed: true, Cancel: true}},
		{"only a finish deadline", store.DueDeadline{Status: store.RunPending,
			RunDeadlines: store.RunDeadlines{FinishDeadlineAt: at(200), DeadlineAction: store.DeadlineAlarm, DeadlineCheckAt: at(200)}}, 200,
			scheduler.DeadlineDecision{Missed: true}},
	} {
		require.Equal(t, tc.want, scheduler.DecideDeadlines(tc.run, tc.now), tc.name)
	}
}

// deadlineCounter is a scheduler.Observer that counts missed deadlines.
type deadlineCounter struct {
	mu     sync.Mutex
	missed map[string]int
}

func (d *deadlineCounter) RunStarted(string, time.Duration) {}

func (d *deadlineCounter) CapWaited(string, time.Duration) {}
func (d *deadlineCounter) DeadlineMissed(kind string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.missed[kind]++
}

func (d *deadlineCounter) get() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return map[string]int{scheduler.DeadlineStart: d.missed[scheduler.DeadlineStart], scheduler.DeadlineFinish: d.missed[scheduler.DeadlineFinish]}
}

func alarmsOfKind(t *testing.T, st *store.Store, kind string) []store.Alarm {
	t.Helper()
	all, err := st.Alarms(context.Background(), 0, 1000)
	require.NoError(t, err)
	var out []store.Alarm
	for _, a := range all {
		if a.Kind == kind {
			out = append(out, a)
		}
	}
	return out
}

func TestDeadlinesAlarmOnceAndCancel(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		p := &fakePusher{}
		obs := &deadlineCounter{missed: map[string]int{}}
		s, err := scheduler.New(scheduler.Config{ID: "test", Clock: c, Observer: obs}, st, p)
		require.NoError(t, err)
		claim(t, st, 1)
		online(t, st, store.ExecutorInfo{InstanceID: "x", App: "b", Address: "http://127.0.0.1:1", Capacity: 4, Handlers: []string{"h"}})
		// App "a" has no executor: its run never starts.
		late := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "late", Handler: "h", Cron: "* * * * *",
			StartDeadline: "2m"}}, t0)
		slow := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "b", Name: "slow", Handler: "h", Cron: "* * * * *", SlotCount: 2,
			FinishDeadline: "5m", DeadlineAction: "cancel"}}, t0)
		scheduled := t0.Add(time.Minute)
		c.Set(scheduled)
		require.NoError(t, s.FireAll(ctx, 1))
		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		lateRun, slowRun := runsOf(t, st, late.ID)[0], runsOf(t, st, slow.ID)[0]
		require.Equal(t, scheduled.Add(2*time.Minute).UnixMilli(), lateRun.StartDeadlineAt.Int64, "the run keeps its deadline as an instant")
		require.False(t, lateRun.FinishDeadlineAt.Valid)
		require.Equal(t, scheduled.Add(5*time.Minute).UnixMilli(), slowRun.FinishDeadlineAt.Int64)
		require.Equal(t, store.DeadlineCancel, slowRun.DeadlineAction)
		require.Equal(t, store.RunRunning, slowRun.Status)

		// Just before the start deadline: nothing.
		c.Set(scheduled.Add(2*time.Minute - time.Millisecond))
		require.NoError(t, s.CheckDeadlines(ctx))
		require.Empty(t, alarmsOfKind(t, st, store.AlarmRunLateStart))

		// At it, on every later tick, and by a second leader: one alarm.
		c.Set(scheduled.Add(2 * time.Minute))
		second, err := scheduler.New(scheduler.Config{ID: "second", Clock: c, Observer: obs}, st, p)
		require.NoError(t, err)
		for range 3 {
			require.NoError(t, s.CheckDeadlines(ctx))
		}
		_, err = st.DB().Exec(`UPDATE job_run SET deadline_check_at = start_deadline_at WHERE id = ?`, lateRun.ID) // as if the check was not recorded
		require.NoError(t, err)
		require.NoError(t, second.CheckDeadlines(ctx))
		alarms := alarmsOfKind(t, st, store.AlarmRunLateStart)
		require.Len(t, alarms, 1)
		require.Equal(t, lateRun.ID, alarms[0].RunID.Int64)
		require.Equal(t, "a", alarms[0].App)
		require.Equal(t, msg.AlarmRunLateStart, alarms[0].Msg.Code)
		require.Equal(t, map[string]int{scheduler.DeadlineStart: 1, scheduler.DeadlineFinish: 0}, obs.get())
		r, err := st.Run(ctx, lateRun.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunPending, r.Status, "a late start only alarms")

		// The finish deadline passes while slow's run runs: cancelled, pushed, alarmed once.
		c.Set(scheduled.Add(5*time.Minute + time.Second))
		require.NoError(t, s.CheckDeadlines(ctx))
		require.NoError(t, s.CheckDeadlines(ctx))
		s.WaitPushes()
		r, err = st.Run(ctx, slowRun.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunCancelled, r.Status)
		require.Equal(t, msg.RunDeadlineCancelled, r.ErrorMsg.Code)
		require.Contains(t, r.Error, "finish deadline")
		p.mu.Lock()
		require.Len(t, p.cancels, 1, "the cancel is pushed to the executor")
		require.Len(t, p.cancels[0].Tokens, 2)
		p.mu.Unlock()
		missed := alarmsOfKind(t, st, store.AlarmRunDeadlineMissed)
		require.Len(t, missed, 1)
		require.Equal(t, msg.AlarmDeadlineCancel, missed[0].Msg.Code)
		require.Equal(t, map[string]int{scheduler.DeadlineStart: 1, scheduler.DeadlineFinish: 1}, obs.get())
		due, err := st.DeadlinesDue(ctx, c.Now().Add(time.Hour).UnixMilli(), 10)
		require.NoError(t, err)
		require.Empty(t, due, "every deadline is checked")
	})
}
