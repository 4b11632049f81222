package watchdog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/watchdog"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// createJobAt stores job j as if it were created and last changed at
// created (the gap audit's window starts there), and returns its id.
func createJobAt(t *testing.T, st *store.Store, j store.Job, created time.Time) int64 {
	t.Helper()
	id, err := st.CreateJob(context.Background(), j)
	require.NoError(t, err)
	_, err = st.DB().Exec(`UPDATE job SET created_at = ?, updated_at = ? WHERE id = ?`, created.UnixMilli(), created.UnixMilli(), id)
	require.NoError(t, err)
	return id
}

func TestOverdueJobRaisesOneAlarm(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now, err := st.Now(ctx)
		require.NoError(t, err)
		v, err := jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "late", Handler: "h", Cron: "* * * * *"}}, now)
		require.NoError(t, err)
		id, err := st.CreateJob(ctx, v.Job)
		require.NoError(t, err)
		w, err := watchdog.New(watchdog.Config{ID: "replica-1", Grace: 30 * time.Second}, st)
		require.NoError(t, err)

		n, err := w.CheckOverdue(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "a job due in the future is not overdue")

		// Nobody fired it for 5 minutes.
		_, err = st.DB().Exec(`UPDATE job SET next_fire_at = ? WHERE id = ?`, now.Add(-5*time.Minute).UnixMilli(), id)
		require.NoError(t, err)
		n, err = w.CheckOverdue(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		// Another replica sees the same problem: still one alarm.
		w2, err := watchdog.New(watchdog.Config{ID: "replica-2"}, st)
		require.NoError(t, err)
		n, err = w2.CheckOverdue(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		alarms, err := st.Alarms(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, alarms, 1)
		require.Equal(t, store.AlarmMissedFire, alarms[0].Kind)
		require.Contains(t, alarms[0].Message, "a/late should have fired")
		require.Equal(t, "replica-1", alarms[0].RaisedBy)

		// A paused job is not overdue.
		require.NoError(t, st.SetJobPaused(ctx, id, true, v.Job.NextFireAt))
		_, err = st.DB().Exec(`UPDATE job SET next_fire_at = ? WHERE id = ?`, now.Add(-10*time.Minute).UnixMilli(), id)
		require.NoError(t, err)
		n, err = w.CheckOverdue(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

func TestGapAuditFindsFiringsWithoutRuns(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		created := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		mk := func(name string) int64 {
			v, err := jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: name, Handler: "h", Cron: "* * * * *"}}, created)
			require.NoError(t, err)
			return createJobAt(t, st, v.Job, created)
		}
		complete, holey := mk("complete"), mk("holey")
		from := created.Add(time.Hour)
		to := from.Add(10 * time.Minute)
		var runs []store.NewRun
		for i := range 10 {
			at := from.Add(time.Duration(i) * time.Minute).UnixMilli()
			status := store.RunPending
			if i == 3 {
				status = store.RunSkipped // a recorded skip is not a gap
			}
			runs = append(runs, store.NewRun{JobID: complete, ScheduledAt: at, TriggerKind: store.TriggerCron, Status: status, SlotCount: 1})
			if i != 4 && i != 7 {
				runs = append(runs, store.NewRun{JobID: holey, ScheduledAt: at, TriggerKind: store.TriggerCron, Status: store.RunPending, SlotCount: 1})
			}
		}
		for _, r := range runs {
			_, _, err := st.InsertRun(ctx, 1, r)
			require.NoError(t, err)
		}
		w, err := watchdog.New(watchdog.Config{ID: "r"}, st)
		require.NoError(t, err)
		n, err := w.AuditGaps(ctx, from, to)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		alarms, err := st.Alarms(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, alarms, 1)
		require.Equal(t, holey, alarms[0].JobID.Int64)
		require.Contains(t, alarms[0].Message, "2 of 10 firings")
	})
}

// TestArchiveBehind: an enabled dedup-archive job that has not succeeded for
// ArchiveMaxAge raises one archive_behind alarm a day; a recent success, a
// paused job or another handler raises none.
func TestArchiveBehind(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now, err := st.Now(ctx)
		require.NoError(t, err)
		create := func(name, handler string) int64 {
			v, err := jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: name, Handler: "h", Cron: "0 3 * * *"}}, now)
			require.NoError(t, err)
			v.Job.Handler = handler
			id, err := st.CreateJob(ctx, v.Job)
			require.NoError(t, err)
			return id
		}
		archive := create("archive", watchdog.ArchiveHandler)
		create("other", "h")
		later := now.Add(72 * time.Hour)
		w, err := watchdog.New(watchdog.Config{ID: "r1", Clock: clock.NewManual(later)}, st)
		require.NoError(t, err)
		n, err := w.CheckArchive(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		n, err = w.CheckArchive(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "once a day")
		alarms, err := st.Alarms(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, alarms, 1)
		require.Equal(t, store.AlarmArchiveBehind, alarms[0].Kind)
		require.Equal(t, archive, alarms[0].JobID.Int64)
		require.Contains(t, alarms[0].Message, "never")

		// A success an hour ago: nothing the next day.
		_, err = st.DB().Exec(`INSERT INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch, created_at, finished_at)
			VALUES (?, 1, 'cron', 'succeeded', '', 1, 1, 0, ?)`, archive, later.Add(23*time.Hour).UnixMilli())
		require.NoError(t, err)
		w2, err := watchdog.New(watchdog.Config{ID: "r1", Clock: clock.NewManual(later.Add(24 * time.Hour))}, st)
		require.NoError(t, err)
		n, err = w2.CheckArchive(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}
