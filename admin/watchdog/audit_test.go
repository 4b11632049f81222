package watchdog_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/watchdog"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// minutely creates an every-minute job of app "a" created (and changed) at
// created, with its audit cursor there, and returns its id.
func minutely(t *testing.T, st *store.Store, name string, created time.Time) int64 {
	t.Helper()
	v, err := jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: name, Handler: "h", Cron: "* * * * *"}}, created)
	require.NoError(t, err)
	id := createJobAt(t, st, v.Job, created)
	setCursor(t, st, "job_audit", "job_id", id, created)
	return id
}

func setCursor(t *testing.T, st *store.Store, table, key string, id int64, at time.Time) {
	t.Helper()
	_, err := st.DB().Exec(`UPDATE `+table+` SET audit_next_at = ? WHERE `+key+` = ?`, at.UnixMilli(), id)
	require.NoError(t, err)
}

func cursorOf(t *testing.T, st *store.Store, id int64) sql.NullInt64 {
	t.Helper()
	var c sql.NullInt64
	require.NoError(t, st.DB().QueryRow(`SELECT audit_next_at FROM job_audit WHERE job_id = ?`, id).Scan(&c))
	return c
}

// runsEveryMinute records cron runs of job at each minute from t0 on for n
// minutes, except the minutes in holes.
func runsEveryMinute(t *testing.T, st *store.Store, job int64, t0 time.Time, n int, holes ...int) {
	t.Helper()
	skip := map[int]bool{}
	for _, h := range holes {
		skip[h] = true
	}
	for i := range n {
		if skip[i] {
			continue
		}
		_, _, err := st.InsertRun(context.Background(), 1, store.NewRun{JobID: job, ScheduledAt: t0.Add(time.Duration(i) * time.Minute).UnixMilli(),
			TriggerKind: store.TriggerCron, Status: store.RunPending, SlotCount: 1})
		require.NoError(t, err)
	}
}

func alarmsOfKind(t *testing.T, st *store.Store, kind string) []store.Alarm {
	t.Helper()
	all, err := st.Alarms(context.Background(), 0, 100)
	require.NoError(t, err)
	var out []store.Alarm
	for _, a := range all {
		if a.Kind == kind {
			out = append(out, a)
		}
	}
	return out
}

// TestIncrementalAuditChecksEachInstantOnce: the audit checks each job's
// instants from its cursor, finds a gap once (a second pass has nothing
// due), and moves the cursor to the next expected instant. A watchdog away
// for 20 minutes, then limited to one job per pass, falls behind: the
// behind alarm says how many jobs and how late; the next passes go on where
// the first stopped, find the gap in the middle of the 20 minutes, and the
// behind alarm resolves itself once the audit has caught up.
func TestIncrementalAuditChecksEachInstantOnce(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		complete, holey := minutely(t, st, "complete", t0), minutely(t, st, "holey", t0)
		runsEveryMinute(t, st, complete, t0, 40)
		runsEveryMinute(t, st, holey, t0, 40, 7, 22)
		clk := clock.NewManual(t0.Add(10*time.Minute + 30*time.Second))
		w, err := watchdog.New(watchdog.Config{ID: "r1", Clock: clk, Grace: 30 * time.Second, AuditBatch: 1, BehindLag: 2 * time.Minute}, st)
		require.NoError(t, err)

		r, err := w.AuditJobsDue(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, watchdog.AuditResult{Audited: 2, Gaps: 1, Done: true}, r)
		gaps := alarmsOfKind(t, st, store.AlarmMissedFire)
		require.Len(t, gaps, 1)
		require.Equal(t, holey, gaps[0].JobID.Int64)
		require.Equal(t, "job a/holey: 1 of 10 firings between 2026-05-01T12:00:00Z and 2026-05-01T12:10:00Z have neither a run nor a recorded skip", gaps[0].Message)
		require.Equal(t, t0.Add(10*time.Minute).UnixMilli(), cursorOf(t, st, holey).Int64, "the next instant")
		r, err = w.AuditJobsDue(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, watchdog.AuditResult{Done: true}, r, "nothing is due twice")

		// Away 20 minutes; then one batch of one job.
		clk.Set(t0.Add(30*time.Minute + 30*time.Second))
		r, err = w.AuditJobsDue(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, watchdog.AuditResult{Audited: 1}, r)
		n, err := w.CheckBehind(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		n, err = w.CheckBehind(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "once until caught up")
		behind := alarmsOfKind(t, st, store.AlarmWatchdogBehind)
		require.Len(t, behind, 1)
		require.Equal(t, "warning", behind[0].Severity)
		require.Equal(t, "the missed-fire audit of jobs is behind: 1 of them have firings due for more than 2m0s that are not checked yet, the oldest since 2026-05-01T12:10:00Z (20m0s late); they will be checked late, not skipped: see the load of the admin replicas and docs/guarantees.md", behind[0].Message)
		require.False(t, behind[0].ResolvedAt.Valid)

		r, err = w.AuditJobsDue(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, 1, r.Gaps, "the hole at 12:22, in the middle of the time away")
		require.True(t, r.Done)
		gaps = alarmsOfKind(t, st, store.AlarmMissedFire)
		require.Len(t, gaps, 2)
		require.Contains(t, gaps[0].Message, "1 of 20 firings between 2026-05-01T12:10:00Z and 2026-05-01T12:30:00Z")
		_, err = w.CheckBehind(ctx)
		require.NoError(t, err)
		behind = alarmsOfKind(t, st, store.AlarmWatchdogBehind)
		require.Len(t, behind, 1)
		require.True(t, behind[0].ResolvedAt.Valid, "resolved once caught up")
		require.Equal(t, store.ResolvedByAdmin, behind[0].ResolvedBy)
	})
}

// TestIncrementalAuditConcurrentReplicas: replicas auditing the same
// cursors at once raise one alarm per gap, and every job is audited by one
// of them.
func TestIncrementalAuditConcurrentReplicas(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		const jobs = 12
		for i := range jobs {
			id := minutely(t, st, "j"+string(rune('a'+i)), t0)
			runsEveryMinute(t, st, id, t0, 10, i%5) // one hole each
		}
		clk := clock.NewManual(t0.Add(10*time.Minute + 30*time.Second))
		var wg sync.WaitGroup
		results := make([]watchdog.AuditResult, 3)
		errs := make([]error, 3)
		for i := range results {
			w, err := watchdog.New(watchdog.Config{ID: "replica-" + string(rune('1'+i)), Clock: clk, AuditBatch: 4}, st)
			require.NoError(t, err)
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = w.AuditJobsDue(ctx, 0)
			}()
		}
		wg.Wait()
		audited, gaps := 0, 0
		for i, r := range results {
			require.NoError(t, errs[i])
			audited += r.Audited
			gaps += r.Gaps
		}
		require.Equal(t, jobs, audited, "each job audited by one replica")
		require.Equal(t, jobs, gaps)
		require.Len(t, alarmsOfKind(t, st, store.AlarmMissedFire), jobs, "one alarm per gap")
	})
}

// TestAuditCursorFollowsChanges: a change of the job (edit, enable, resume)
// sets its cursor to the change; the audit parks the cursor of a paused or
// disabled job (nothing to audit, nothing read each pass) and a resume sets
// it again; a deleted job's cursor goes with it.
func TestAuditCursorFollowsChanges(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now, err := st.Now(ctx)
		require.NoError(t, err)
		v, err := jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "j", Handler: "h", Cron: "* * * * *"}}, now)
		require.NoError(t, err)
		id, err := st.CreateJob(ctx, v.Job)
		require.NoError(t, err)
		c := cursorOf(t, st, id)
		require.True(t, c.Valid)
		require.InDelta(t, now.UnixMilli(), c.Int64, 60_000, "a new job is audited from its creation")

		old := now.Add(-time.Hour)
		setCursor(t, st, "job_audit", "job_id", id, old)
		require.NoError(t, st.SetJobPaused(ctx, id, true, v.Job.NextFireAt))
		require.Greater(t, cursorOf(t, st, id).Int64, old.UnixMilli(), "a change moves the cursor to it")

		w, err := watchdog.New(watchdog.Config{ID: "r", Clock: clock.NewManual(now.Add(time.Hour))}, st)
		require.NoError(t, err)
		r, err := w.AuditJobsDue(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, 1, r.Audited)
		require.False(t, cursorOf(t, st, id).Valid, "paused: parked")

		require.NoError(t, st.SetJobPaused(ctx, id, false, v.Job.NextFireAt))
		c = cursorOf(t, st, id)
		require.True(t, c.Valid, "resumed: audited from the resume on")
		require.GreaterOrEqual(t, c.Int64, now.UnixMilli())

		j, err := st.Job(ctx, id)
		require.NoError(t, err)
		setCursor(t, st, "job_audit", "job_id", id, old)
		j.Description = "edited"
		require.NoError(t, st.UpdateJob(ctx, j))
		require.GreaterOrEqual(t, cursorOf(t, st, id).Int64, now.UnixMilli(), "an edit moves the cursor")

		require.NoError(t, st.DeleteJob(ctx, id))
		var n int
		require.NoError(t, st.DB().QueryRow(`SELECT COUNT(*) FROM job_audit WHERE job_id = ?`, id).Scan(&n))
		require.Zero(t, n)
	})
}

// TestIncrementalWorkflowAudit: the workflow cursor works as the job's: the
// firings the engine made are no gap, the two nobody made are one alarm,
// raised once.
func TestIncrementalWorkflowAudit(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ok, err := st.ClaimEpoch(ctx, 1, "leader")
		require.NoError(t, err)
		require.True(t, ok)
		t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
		wf := scheduledWorkflow(t, st, "eod", t0)
		setCursor(t, st, "workflow_audit", "workflow_id", wf.ID, t0)
		clk := clock.NewManual(t0)
		e, err := workflowrun.New(workflowrun.Config{Clock: clk}, st)
		require.NoError(t, err)
		for _, m := range []int{10, 20} {
			clk.Set(t0.Add(time.Duration(m)*time.Minute + 200*time.Millisecond))
			_, err := e.Fire(ctx, 1)
			require.NoError(t, err)
		}
		clk.Set(t0.Add(45*time.Minute + 30*time.Second))
		w, err := watchdog.New(watchdog.Config{ID: "r1", Clock: clk}, st)
		require.NoError(t, err)
		r, err := w.AuditWorkflowsDue(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, watchdog.AuditResult{Audited: 1, Gaps: 1, Done: true}, r)
		alarms := alarmsOfKind(t, st, store.AlarmWorkflowMissed)
		require.Len(t, alarms, 1)
		require.Equal(t, "workflow fin/eod: 2 of 4 firings between 2026-03-02T00:00:00Z and 2026-03-02T00:45:00Z have neither a run nor a recorded skip", alarms[0].Message)
		r, err = w.AuditWorkflowsDue(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, watchdog.AuditResult{Done: true}, r)
	})
}
