package retention_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/internal/loops"
	"github.com/shardjob/shardjob/admin/retention"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }

const day = 24 * time.Hour

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fixture is the history the tests start from, ages relative to the
// database clock.
type fixture struct {
	oldRuns, oldAttempts     int // finished > 90 days ago: go
	keptRuns, keptAttempts   int // recent, or unfinished however old: stay
	oldAlarms, oldDeliveries int // > 90 days, delivered: go
	keptAlarms               int // recent, or not delivered yet: stay
	oldAudit, keptAudit      int
	oldSamples, keptSamples  int // utilization: > 7 days go
}

func seed(t *testing.T, s *store.Store, n int) fixture {
	t.Helper()
	ctx := context.Background()
	db := s.DB()
	now, err := s.Now(ctx)
	require.NoError(t, err)
	ago := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
	var f fixture
	run := func(i int, status string, created, finished int64, slots int) {
		var fin any
		if finished != 0 {
			fin = finished
		}
		id := storetest.InsertID(t, s, `INSERT INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch, created_at, started_at, finished_at)
			VALUES (?, ?, 'cron', ?, '', ?, 1, ?, ?, ?)`, 1+i%3, int64(i)*1000+created, status, slots, created, created, fin)
		for slot := range slots {
			_, err := db.ExecContext(ctx, `INSERT INTO slot_attempt (run_id, slot, attempt, status, current) VALUES (?, ?, 1, 'succeeded', 1)`, id, slot)
			require.NoError(t, err)
		}
	}
	for i := range n {
		slots := 1 + i%4
		switch i % 5 {
		case 0, 1: // finished 100+ days ago
			run(i, []string{store.RunSucceeded, store.RunFailed, store.RunPartiallyFailed, store.RunCancelled, store.RunSkipped}[i%5*2%5], ago(100*day)-int64(i), ago(99*day)-int64(i), slots)
			f.oldRuns++
			f.oldAttempts += slots
		case 2: // created long ago, finished recently
			run(i, store.RunSucceeded, ago(100*day)-int64(i), ago(10*day), slots)
			f.keptRuns++
			f.keptAttempts += slots
		case 3: // still running (or pending) after 200 days
			run(i, []string{store.RunRunning, store.RunPending}[i%2], ago(200*day)-int64(i), 0, slots)
			f.keptRuns++
			f.keptAttempts += slots
		case 4: // recent
			run(i, store.RunSucceeded, ago(day), ago(day)+1000, slots)
			f.keptRuns++
			f.keptAttempts += slots
		}
		alarm := func(at int64, fanned int, delivery string) {
			id := storetest.InsertID(t, s, `INSERT INTO alarm_event (at, kind, severity, dedup_key, message, raised_by, fanned_out) VALUES (?, 'run_failed', 'error', ?, 'm', 'a', ?)`,
				at, "k"+time.Now().String()+string(rune('a'+i%26))+itoa(i)+delivery, fanned)
			// Each alarm a group of its own (as migration 0031 makes them).
			_, err := db.ExecContext(ctx, `INSERT INTO alarm_event_group (id, group_key, scope, created_at) VALUES (?, ?, ?, ?)`, id, "alarm:"+itoa(int(id)), "alarm:"+itoa(int(id)), at)
			require.NoError(t, err)
			_, err = db.ExecContext(ctx, `UPDATE alarm_event SET group_id = id WHERE id = ?`, id)
			require.NoError(t, err)
			if delivery != "" {
				_, err = db.ExecContext(ctx, `INSERT INTO alarm_delivery (alarm_id, group_key, status, created_at) VALUES (?, 'g', ?, ?)`, id, delivery, at)
				require.NoError(t, err)
			}
		}
		switch i % 4 {
		case 0:
			alarm(ago(120*day)-int64(i), 1, "sent")
			f.oldAlarms++
			f.oldDeliveries++
		case 1:
			alarm(ago(120*day)-int64(i), 1, "")
			f.oldAlarms++
		case 2:
			alarm(ago(120*day)-int64(i), 1, "pending") // not delivered yet
			f.keptAlarms++
		case 3:
			alarm(ago(10*day), 1, "sent")
			f.keptAlarms++
		}
		at := ago(400 * day)
		if i%3 == 0 {
			at = ago(300 * day)
			f.keptAudit++
		} else {
			f.oldAudit++
		}
		_, err := db.ExecContext(ctx, `INSERT INTO audit_log (at, actor, action, object, detail) VALUES (?, 'u', 'job.update', 'job/1', '')`, at-int64(i))
		require.NoError(t, err)
		sample := store.UtilizationSample{At: ago(6*day + time.Duration(i)*time.Minute), App: "a", Executors: 1, Capacity: 4, Busy: i % 5}
		if i%2 == 0 {
			sample.At = ago(8*day) - int64(i)
			f.oldSamples++
		} else {
			f.keptSamples++
		}
		require.NoError(t, s.AddUtilizationSamples(ctx, []store.UtilizationSample{sample}))
	}
	return f
}

func itoa(i int) string { return time.Duration(i).String() }

func count(t *testing.T, s *store.Store, q string) int {
	t.Helper()
	var n int
	require.NoError(t, s.DB().Get(&n, q))
	return n
}

func TestRetentionPass(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, s *store.Store) {
		f := seed(t, s, 300)
		ctx := context.Background()
		user, err := s.CreateUser(ctx, "u", "not-a-real-hash", store.RoleViewer)
		require.NoError(t, err)
		require.NoError(t, s.CreateSession(ctx, "expired", user, -time.Minute))
		require.NoError(t, s.CreateSession(ctx, "valid", user, time.Hour))
		r, err := retention.New(retention.Config{BatchSize: 7, Pause: -1, Logger: quiet}, s)
		require.NoError(t, err)
		rep, err := r.RunOnce(ctx)
		require.NoError(t, err)
		t.Logf("%+v", rep)
		require.EqualValues(t, f.oldRuns, rep.Runs)
		require.EqualValues(t, f.oldAttempts, rep.Attempts)
		require.EqualValues(t, f.oldAlarms, rep.Alarms)
		require.EqualValues(t, f.oldDeliveries, rep.Deliveries)
		require.EqualValues(t, f.oldAudit, rep.Audit)
		require.EqualValues(t, f.oldSamples, rep.Samples)
		require.EqualValues(t, 1, rep.Sessions, "expired console sessions are deleted")
		require.Equal(t, 1, count(t, s, "SELECT COUNT(*) FROM user_session WHERE token_hash = 'valid'"))
		require.Equal(t, f.keptRuns, count(t, s, "SELECT COUNT(*) FROM job_run"))
		require.Equal(t, f.keptAttempts, count(t, s, "SELECT COUNT(*) FROM slot_attempt"))
		require.Equal(t, 0, count(t, s, "SELECT COUNT(*) FROM slot_attempt a WHERE NOT EXISTS (SELECT 1 FROM job_run r WHERE r.id = a.run_id)"))
		require.Equal(t, 0, count(t, s, "SELECT COUNT(*) FROM job_run WHERE status IN ('pending', 'running') AND finished_at IS NOT NULL"))
		require.Equal(t, f.keptAlarms, count(t, s, "SELECT COUNT(*) FROM alarm_event"))
		require.Equal(t, f.keptAlarms, count(t, s, "SELECT COUNT(*) FROM alarm_event_group"), "the groups left empty are deleted")
		require.Equal(t, 0, count(t, s, "SELECT COUNT(*) FROM alarm_event a WHERE NOT EXISTS (SELECT 1 FROM alarm_event_group g WHERE g.id = a.group_id)"))
		require.Equal(t, f.keptAudit, count(t, s, "SELECT COUNT(*) FROM audit_log"))
		require.Equal(t, f.keptSamples, count(t, s, "SELECT COUNT(*) FROM utilization_sample"))

		again, err := r.RunOnce(context.Background())
		require.NoError(t, err)
		require.Equal(t, retention.Report{}, again, "a second pass finds nothing")
	})
}

func TestRetentionKeepForever(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, s *store.Store) {
		f := seed(t, s, 40)
		r, err := retention.New(retention.Config{Runs: retention.KeepForever, Alarms: retention.KeepForever, Audit: 350 * day, Samples: retention.KeepForever, Pause: -1, Logger: quiet}, s)
		require.NoError(t, err)
		rep, err := r.RunOnce(context.Background())
		require.NoError(t, err)
		require.Equal(t, retention.Report{Audit: int64(f.oldAudit), Batches: 1}, rep)
		require.Equal(t, f.oldRuns+f.keptRuns, count(t, s, "SELECT COUNT(*) FROM job_run"))
		require.Equal(t, f.oldSamples+f.keptSamples, count(t, s, "SELECT COUNT(*) FROM utilization_sample"))
	})
}

func TestRetentionConfig(t *testing.T) {
	t.Parallel()
	c := retention.Config{}.WithDefaults()
	require.Equal(t, 90*day, c.Runs)
	require.Equal(t, 365*day, c.Audit)
	require.Equal(t, 7*day, c.Samples)
	_, err := retention.New(retention.Config{Runs: time.Minute, BatchSize: 9000}, nil)
	require.ErrorContains(t, err, "Runs horizon 1m0s")
	require.ErrorContains(t, err, "BatchSize 9000")
}

// TestRetentionDuringATerm: passes run during a term (Run started as the
// server starts the term's duties) and stop with it, repeatedly (goleak
// checks that no loop outlives its term).
func TestRetentionDuringATerm(t *testing.T) {
	t.Parallel()
	s := storetest.Open(t, "sqlite")
	f := seed(t, s, 20)
	passes := make(chan retention.Report, 16)
	r, err := retention.New(retention.Config{FirstDelay: time.Millisecond, Interval: time.Hour, Pause: -1, Logger: quiet,
		OnPass: func(rep retention.Report, err error) {
			if err == nil {
				passes <- rep
			}
		}}, s)
	require.NoError(t, err)
	for term := range 5 {
		duties := loops.Start(context.Background(), loops.Quiet(r.Run))
		select {
		case rep := <-passes:
			if term == 0 {
				require.EqualValues(t, f.oldRuns, rep.Runs)
			}
		case <-time.After(30 * time.Second):
			t.Error("no retention pass while leading")
		}
		require.NoError(t, duties.Stop())
	}
}

// TestRetentionDeadLetters: dead letters older than their own horizon
// (default 30 days) go in batches, whatever became of their runs; younger
// ones stay, and runs are kept by theirs.
func TestRetentionDeadLetters(t *testing.T) {
	t.Parallel()
	require.Equal(t, 30*day, retention.Config{}.WithDefaults().Dead)
	storetest.EachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now, err := s.Now(ctx)
		require.NoError(t, err)
		old, kept := 0, 0
		for i := range 25 {
			age := 10 * day
			if i%5 != 0 {
				age = 31*day + time.Duration(i)*time.Minute
				old++
			} else {
				kept++
			}
			_, err := s.DB().ExecContext(ctx, s.DB().Rebind(`INSERT INTO dead_letter (app, job_id, job_name, handler, run_id, scheduled_at, slot, token, attempt, params,
				slot_param, error, error_msg, error_class, died_at) VALUES ('a', 1, 'j', 'h', 1, 1, ?, ?, 1, '{}', '', 'boom', '', 'permanent', ?)`),
				i, 1000+i, now.Add(-age).UnixMilli())
			require.NoError(t, err)
		}
		_, err = s.DB().ExecContext(ctx, `INSERT INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch, created_at) VALUES (1, 1, 'cron', 'running', '', 1, 1, 1)`)
		require.NoError(t, err)
		r, err := retention.New(retention.Config{BatchSize: 4, Pause: -1, Logger: quiet}, s)
		require.NoError(t, err)
		rep, err := r.RunOnce(ctx)
		require.NoError(t, err)
		require.EqualValues(t, old, rep.Dead)
		require.Equal(t, kept, count(t, s, "SELECT COUNT(*) FROM dead_letter"))
		require.Equal(t, 1, count(t, s, "SELECT COUNT(*) FROM job_run"), "runs follow their own horizon")

		r, err = retention.New(retention.Config{Dead: retention.KeepForever, Pause: -1, Logger: quiet}, s)
		require.NoError(t, err)
		_, err = r.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, kept, count(t, s, "SELECT COUNT(*) FROM dead_letter"))
	})
}
