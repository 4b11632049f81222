package store_test

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/sdk/protocol"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func eachDialect(t *testing.T, fn func(t *testing.T, s *store.Store)) { storetest.EachDialect(t, fn) }

func TestMigrateIsIdempotentAndVersioned(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		latest, err := store.LatestVersion(s.Dialect())
		require.NoError(t, err)
		v, err := s.SchemaVersion(ctx)
		require.NoError(t, err)
		require.Equal(t, latest, v)

		n, err := s.Migrate(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "second migrate must be a no-op")

		// A database from the future is refused.
		_, err = s.DB().ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', 0)`, latest+1)
		require.NoError(t, err)
		_, err = s.Migrate(ctx)
		require.ErrorIs(t, err, store.ErrSchemaTooNew)
		require.ErrorContains(t, err, "upgrade shardjob")
	})
}

func TestMigrationsAreWellFormed(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		migs, err := store.Migrations(d)
		require.NoError(t, err)
		require.NotEmpty(t, migs)
		for _, m := range migs {
			require.NotEmpty(t, m.Down, "migration %d of %s needs a down section (after \"-- migrate down\")", m.Version, d)
		}
	}
	my, _ := store.Migrations(sqlfiles.MySQL)
	lite, _ := store.Migrations(sqlfiles.SQLite)
	require.Equal(t, len(my), len(lite), "MySQL and SQLite must have the same migration versions")
	// PostgreSQL starts at a baseline; after it, its versions are those of
	// the other dialects.
	pg, _ := store.Migrations(sqlfiles.Postgres)
	require.Equal(t, "baseline", pg[0].Name)
	for _, m := range pg[1:] {
		require.Equal(t, my[m.Version-1].Name, m.Name, "PostgreSQL's migration %04d must do what MySQL's does", m.Version)
	}
	for _, d := range storetest.Dialects {
		latest, err := store.LatestVersion(d)
		require.NoError(t, err)
		require.Equal(t, len(my), latest, "%s must know every migration", d)
	}
}

func TestMigrationsRefuseAGapAfterTheBaseline(t *testing.T) {
	t.Parallel()
	pg, err := store.Migrations(sqlfiles.Postgres)
	require.NoError(t, err)
	require.Equal(t, 46, pg[0].Version, "the PostgreSQL schema starts at version 46")
}

func TestConcurrentMigrateOnMySQL(t *testing.T) {
	t.Parallel()
	dsn := testenv.MySQL(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	applied := make([]int, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := store.Open(ctx, store.Config{Driver: sqlfiles.MySQL, DSN: dsn})
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close()
			applied[i], errs[i] = s.Migrate(ctx)
		}()
	}
	wg.Wait()
	total := 0
	for i := range 4 {
		require.NoError(t, errs[i])
		total += applied[i]
	}
	latest, _ := store.LatestVersion(sqlfiles.MySQL)
	require.Equal(t, latest, total, "each migration applied exactly once across concurrent admins")
}

func TestOpenBadConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, err := store.Open(ctx, store.Config{Driver: "oracle", DSN: "x"})
	require.ErrorContains(t, err, `must be "mysql", "postgres" or "sqlite"`)
	_, err = store.Open(ctx, store.Config{Driver: sqlfiles.Postgres, DSN: "postgres://x:y@host:notaport/db"})
	require.ErrorContains(t, err, "postgres DSN")
	_, err = store.Open(ctx, store.Config{Driver: sqlfiles.MySQL})
	require.ErrorContains(t, err, "DSN is empty")
	port := testenv.FreePort(t)
	_, err = store.Open(ctx, store.Config{Driver: sqlfiles.MySQL, DSN: "root@tcp(127.0.0.1:" + itoa(port) + ")/x", ConnectTimeout: 2 * time.Second})
	require.ErrorContains(t, err, "connect to mysql database")
	_, err = store.Open(ctx, store.Config{Driver: sqlfiles.Postgres, DSN: "postgres://postgres@127.0.0.1:" + itoa(port) + "/x", ConnectTimeout: 2 * time.Second})
	require.ErrorContains(t, err, "connect to postgres database")
}

func itoa(n int) string { return strconv.Itoa(n) }

func newJob(app, name string, next int64) store.Job {
	return store.Job{
		App: app, Name: name, Handler: "noop", CronExpr: "* * * * *", TimeZone: "UTC",
		MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 4, Params: "{}",
		Enabled: true, NextFireAt: sql.NullInt64{Int64: next, Valid: next > 0},
	}
}

// heartbeat registers executor instance of app "a" at 127.0.0.1:port (a
// port that is never called).
func heartbeat(t *testing.T, s *store.Store, instance string, port, capacity int) store.Executor {
	t.Helper()
	addr := "http://127.0.0.1:" + strconv.Itoa(port)
	ex, err := s.Heartbeat(context.Background(), store.ExecutorInfo{InstanceID: instance, App: "a", Address: addr, Capacity: capacity})
	require.NoError(t, err)
	return ex
}

// startRun creates a manual run of job jobID with one slot per executor in
// on and starts it under epoch, slot i placed on on[i].
func startRun(t *testing.T, s *store.Store, epoch, jobID int64, on ...int64) store.Run {
	t.Helper()
	run, _ := startRunAt(t, s, epoch, jobID, 1, on...)
	return run
}

// startRunAt is startRun for the run key (jobID, scheduledAt); it also
// returns the run's attempts, by slot.
func startRunAt(tb testing.TB, s *store.Store, epoch, jobID, scheduledAt int64, on ...int64) (store.Run, []store.Attempt) {
	tb.Helper()
	ctx := context.Background()
	run, _, err := s.InsertRun(ctx, epoch, store.NewRun{JobID: jobID, ScheduledAt: scheduledAt, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: len(on)})
	require.NoError(tb, err)
	atts := make([]store.NewAttempt, len(on))
	for i, ex := range on {
		atts[i] = store.NewAttempt{Slot: i, Attempt: 1, ExecutorID: ex}
	}
	started, err := s.StartRun(ctx, epoch, run.ID, 0, atts)
	require.NoError(tb, err)
	require.True(tb, started, "run %d started", run.ID)
	rows, err := s.Attempts(ctx, run.ID)
	require.NoError(tb, err)
	return run, rows
}

func TestJobsCRUD(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		id, err := s.CreateJob(ctx, newJob("billing", "settle", 1000))
		require.NoError(t, err)
		_, err = s.CreateJob(ctx, newJob("billing", "settle", 1000))
		require.ErrorIs(t, err, store.ErrConflict)
		require.EqualError(t, err, "job billing/settle already exists", "issue 30: no raw \": conflict\" at the end")

		j, err := s.Job(ctx, id)
		require.NoError(t, err)
		require.Equal(t, "settle", j.Name)
		require.Equal(t, 4, j.SlotCount)
		require.True(t, j.Enabled)
		require.Equal(t, int64(1000), j.NextFireAt.Int64)

		require.NoError(t, s.SetJobEnabled(ctx, id, false, sql.NullInt64{}))
		j, err = s.Job(ctx, id)
		require.NoError(t, err)
		require.False(t, j.Enabled)
		require.False(t, j.NextFireAt.Valid)
		require.Equal(t, int64(2), j.Version)
		stale := j
		stale.Version = 1
		err = s.UpdateJob(ctx, stale)
		require.ErrorIs(t, err, store.ErrConflict)
		require.EqualError(t, err, "job "+itoa(int(id))+" was changed by someone else (version 1 is stale): reload it and apply your change again")

		_, err = s.Job(ctx, id+100)
		require.ErrorIs(t, err, store.ErrNotFound)

		for i := range 5 {
			_, err := s.CreateJob(ctx, newJob("billing", "j"+itoa(i), 0))
			require.NoError(t, err)
		}
		page1, err := s.Jobs(ctx, 0, 4)
		require.NoError(t, err)
		require.Len(t, page1, 4)
		page2, err := s.Jobs(ctx, page1[3].ID, 4)
		require.NoError(t, err)
		require.Len(t, page2, 2)

		require.NoError(t, s.DeleteJob(ctx, id))
		require.ErrorIs(t, s.DeleteJob(ctx, id), store.ErrNotFound)
	})
}

func TestEpochFencing(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ok, err := s.ClaimEpoch(ctx, 5, "admin-a")
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = s.ClaimEpoch(ctx, 5, "admin-b")
		require.NoError(t, err)
		require.False(t, ok, "equal epoch must not win")
		ok, err = s.ClaimEpoch(ctx, 3, "admin-b")
		require.NoError(t, err)
		require.False(t, ok, "smaller epoch must not win")

		l, err := s.Leader(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(5), l.Epoch)
		require.Equal(t, "admin-a", l.Holder)

		require.NoError(t, s.Tx(ctx, func(tx *store.Tx) error { return tx.CheckEpoch(ctx, 5) }))
		ok, err = s.ClaimEpoch(ctx, 9, "admin-b")
		require.NoError(t, err)
		require.True(t, ok)
		err = s.Tx(ctx, func(tx *store.Tx) error { return tx.CheckEpoch(ctx, 5) })
		require.ErrorIs(t, err, store.ErrStaleEpoch)
	})
}

func TestRunKeyIsUniqueAndClaimAdvances(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		var ids []int64
		for i := range 3 {
			id, err := s.CreateJob(ctx, newJob("a", "due"+itoa(i), int64(1000+i)))
			require.NoError(t, err)
			ids = append(ids, id)
		}
		_, err = s.CreateJob(ctx, newJob("a", "later", 5000))
		require.NoError(t, err)

		var claimed []store.Job
		err = s.Tx(ctx, func(tx *store.Tx) error {
			if err := tx.CheckEpoch(ctx, 1); err != nil {
				return err
			}
			claimed, err = tx.ClaimDue(ctx, 2000, 10)
			if err != nil {
				return err
			}
			var runs []store.NewRun
			next := map[int64]sql.NullInt64{}
			for _, j := range claimed {
				runs = append(runs, store.NewRun{JobID: j.ID, ScheduledAt: j.NextFireAt.Int64, TriggerKind: store.TriggerCron, Status: store.RunPending, Params: "", SlotCount: j.SlotCount})
				next[j.ID] = sql.NullInt64{Int64: j.NextFireAt.Int64 + 60000, Valid: true}
			}
			n, err := tx.InsertRuns(ctx, 1, runs)
			if err != nil {
				return err
			}
			if n != int64(len(runs)) {
				return errors.New("not all runs inserted")
			}
			// The same firings again: the run key rejects them.
			n, err = tx.InsertRuns(ctx, 1, runs)
			if err != nil {
				return err
			}
			if n != 0 {
				return errors.New("duplicate run keys inserted")
			}
			return tx.SetNextFire(ctx, next)
		})
		require.NoError(t, err)
		require.Len(t, claimed, 3)
		require.Equal(t, ids[0], claimed[0].ID, "oldest first")

		for _, id := range ids {
			j, err := s.Job(ctx, id)
			require.NoError(t, err)
			require.Equal(t, int64(1000+int(id-ids[0])+60000), j.NextFireAt.Int64)
		}
		runs, err := s.Runs(ctx, store.RunFilter{})
		require.NoError(t, err)
		require.Len(t, runs, 3)
		for _, r := range runs {
			require.Equal(t, int64(1), r.Epoch)
			require.Equal(t, store.RunPending, r.Status)
		}
		_, created, err := s.InsertRun(ctx, 1, store.NewRun{JobID: ids[0], ScheduledAt: 1000, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 4})
		require.NoError(t, err)
		require.False(t, created, "manual trigger for an existing run key returns the existing run")
	})
}

func TestRunLifecycleWithFencedResults(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 7, "me")
		require.NoError(t, err)
		jobID, err := s.CreateJob(ctx, newJob("a", "two-slots", 0))
		require.NoError(t, err)
		exA, err := s.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "ex-a", App: "a", Address: "http://127.0.0.1:1", Capacity: 2, Handlers: []string{"noop"}})
		require.NoError(t, err)
		exB := heartbeat(t, s, "ex-b", 2, 2)
		again := heartbeat(t, s, "ex-a", 1, 3)
		require.Equal(t, exA.ID, again.ID)
		require.Equal(t, 3, again.Capacity)

		online, err := s.OnlineExecutors(ctx, "a", 60_000)
		require.NoError(t, err)
		require.Len(t, online, 2)

		run, created, err := s.InsertRun(ctx, 7, store.NewRun{JobID: jobID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 2})
		require.NoError(t, err)
		require.True(t, created)
		started, err := s.StartRun(ctx, 7, run.ID, 0, []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: exA.ID}, {Slot: 1, Attempt: 1, ExecutorID: exB.ID}})
		require.NoError(t, err)
		require.True(t, started)
		started, err = s.StartRun(ctx, 7, run.ID, 0, nil)
		require.NoError(t, err)
		require.False(t, started, "a run starts once")
		_, err = s.StartRun(ctx, 6, run.ID, 0, nil)
		require.ErrorIs(t, err, store.ErrStaleEpoch)

		unacked, err := s.UnackedFor(ctx, exA.ID, 100)
		require.NoError(t, err)
		require.Len(t, unacked, 1)
		require.Equal(t, "noop", unacked[0].Handler)
		tokA := unacked[0].Token
		require.NoError(t, s.AckAttempts(ctx, exA.ID, []int64{tokA}))
		unacked, err = s.UnackedFor(ctx, exA.ID, 100)
		require.NoError(t, err)
		require.Empty(t, unacked)

		ok, err := runstate.New(s).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: tokA, Status: store.AttemptSucceeded, StartedAt: 10, FinishedAt: 20, Processed: 5}, ExecutorID: exA.ID})
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = runstate.New(s).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: tokA, Status: store.AttemptSucceeded, StartedAt: 10, FinishedAt: 20, Processed: 5}, ExecutorID: exA.ID})
		require.NoError(t, err)
		require.True(t, ok, "the same result delivered again is acknowledged again")
		ok, err = runstate.New(s).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: tokA, Status: store.AttemptFailed, FinishedAt: 30}, ExecutorID: exA.ID})
		require.NoError(t, err)
		require.False(t, ok, "a different second result for the same token is ignored")
		ok, err = runstate.New(s).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: tokA, Status: store.AttemptSucceeded, FinishedAt: 30}, ExecutorID: exB.ID})
		require.NoError(t, err)
		require.False(t, ok, "another executor cannot report this token")
		a, err := s.Attempt(ctx, tokA)
		require.NoError(t, err)
		require.Equal(t, store.AttemptSucceeded, a.Status)
		require.Equal(t, int64(5), a.Processed)

		// Executor B goes silent: its slot moves to A with a larger token,
		// and B's late result is rejected.
		atts, err := s.Attempts(ctx, run.ID)
		require.NoError(t, err)
		var oldB store.Attempt
		for _, a := range atts {
			if a.Slot == 1 {
				oldB = a
			}
			want := map[int64]string{exA.ID: "ex-a", exB.ID: "ex-b"}[a.ExecutorID.Int64]
			require.Equal(t, want, a.ExecutorInstance, "a run's attempts name their executor")
		}
		newTok, err := s.Reassign(ctx, 7, oldB, exA.ID, 0)
		require.NoError(t, err)
		require.Greater(t, newTok, oldB.Token)
		stale, err := s.StaleTokens(ctx, exB.ID, []int64{oldB.Token})
		require.NoError(t, err)
		require.Equal(t, []int64{oldB.Token}, stale)
		ok, err = runstate.New(s).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: oldB.Token, Status: store.AttemptSucceeded, FinishedAt: 40}, ExecutorID: exB.ID})
		require.NoError(t, err)
		require.False(t, ok, "stale token rejected")

		r, err := s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, r.Status)

		ok, err = runstate.New(s).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: newTok, Status: store.AttemptFailed, Error: "boom", FinishedAt: 50}, ExecutorID: exA.ID})
		require.NoError(t, err)
		require.True(t, ok)
		r, err = s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunPartiallyFailed, r.Status)
		require.Equal(t, 1, r.SlotsSucceeded)
		require.Equal(t, 1, r.SlotsFailed)
		require.True(t, r.FinishedAt.Valid)
	})
}

func TestLostExecutors(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		ex := heartbeat(t, s, "ex-old", 1, 1)
		jobID, err := s.CreateJob(ctx, newJob("a", "j", 0))
		require.NoError(t, err)
		startRun(t, s, 1, jobID, ex.ID)

		n, err := s.MarkLostExecutors(ctx, 60_000)
		require.NoError(t, err)
		require.Zero(t, n, "a fresh heartbeat is not lost")
		// Age the heartbeat by the database clock.
		_, err = s.DB().ExecContext(ctx, `UPDATE executor SET last_heartbeat = last_heartbeat - 120000 WHERE id = ?`, ex.ID)
		require.NoError(t, err)
		n, err = s.MarkLostExecutors(ctx, 60_000)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		n, err = s.MarkLostExecutors(ctx, 60_000)
		require.NoError(t, err)
		require.Zero(t, n, "lost once")
		alarms, err := s.Alarms(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, alarms, 1)
		require.Equal(t, store.AlarmExecutorLost, alarms[0].Kind)
		require.Contains(t, alarms[0].Message, "ex-old")
		lost, err := s.LostAttempts(ctx, 10)
		require.NoError(t, err)
		require.Len(t, lost, 1)
		online, err := s.OnlineExecutors(ctx, "a", 60_000)
		require.NoError(t, err)
		require.Empty(t, online)
	})
}

func TestUsersSessionsAudit(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		n, err := s.CountUsers(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		id, err := s.CreateUser(ctx, "ops", "hash", store.RoleOperator)
		require.NoError(t, err)
		_, err = s.CreateUser(ctx, "ops", "hash", store.RoleOperator)
		require.ErrorIs(t, err, store.ErrConflict)
		u, err := s.UserByName(ctx, "ops")
		require.NoError(t, err)
		require.Equal(t, id, u.ID)

		require.NoError(t, s.CreateSession(ctx, "h1", id, time.Hour))
		require.NoError(t, s.CreateSession(ctx, "h2", id, -time.Hour))
		got, err := s.SessionUser(ctx, "h1")
		require.NoError(t, err)
		require.Equal(t, "ops", got.Username)
		_, err = s.SessionUser(ctx, "h2")
		require.ErrorIs(t, err, store.ErrNotFound, "expired session")
		require.NoError(t, s.DeleteSession(ctx, "h1"))
		_, err = s.SessionUser(ctx, "h1")
		require.ErrorIs(t, err, store.ErrNotFound)

		require.NoError(t, s.Audit(ctx, store.AuditEntry{Actor: "ops", Action: "job.create", Object: "job/1", Detail: `{"name":"x"}`, App: "billing"}))
		var count int
		require.NoError(t, s.DB().GetContext(ctx, &count, `SELECT COUNT(*) FROM audit_log`))
		require.Equal(t, 1, count)
	})
}

func TestDatabaseClock(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		now, err := s.Now(context.Background())
		require.NoError(t, err)
		require.WithinDuration(t, time.Now(), now, time.Minute)
	})
}

func TestChildJobsTriggeredOncePerParentRun(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 2, "me")
		require.NoError(t, err)
		child := newJob("a", "child", 0)
		child.Params = "from-child-def"
		childID, err := s.CreateJob(ctx, child)
		require.NoError(t, err)
		parent := newJob("a", "parent", 0)
		parent.SlotCount = 1
		parent.ChildJobIDs = strconv.FormatInt(childID, 10)
		parentID, err := s.CreateJob(ctx, parent)
		require.NoError(t, err)
		ex := heartbeat(t, s, "x", 1, 1)

		finish := func(status string) store.Run {
			run, _, err := s.InsertRun(ctx, 2, store.NewRun{JobID: parentID, ScheduledAt: time.Now().UnixNano(), TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 1})
			require.NoError(t, err)
			_, err = s.StartRun(ctx, 2, run.ID, 0, []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: ex.ID}})
			require.NoError(t, err)
			atts, err := s.Attempts(ctx, run.ID)
			require.NoError(t, err)
			o := store.SlotOutcome{SlotResult: protocol.SlotResult{Token: atts[0].Token, Status: status, FinishedAt: 1}, ExecutorID: ex.ID}
			ok, err := runstate.New(s).FinishAttempt(ctx, o)
			require.NoError(t, err)
			require.True(t, ok)
			ok, err = runstate.New(s).FinishAttempt(ctx, o) // delivered twice
			require.NoError(t, err)
			require.True(t, ok)
			return run
		}
		ok1 := finish(store.AttemptSucceeded)
		_ = finish(store.AttemptFailed)
		runs, err := s.Runs(ctx, store.RunFilter{JobID: childID})
		require.NoError(t, err)
		require.Len(t, runs, 1, "one child run for the succeeded parent run, none for the failed one")
		require.Equal(t, store.TriggerChild, runs[0].TriggerKind)
		require.Equal(t, ok1.ID, runs[0].ParentRunID.Int64)
		require.Equal(t, "from-child-def", runs[0].Params)

		graph, err := s.ChildGraphFrom(ctx, []int64{parentID})
		require.NoError(t, err)
		require.Equal(t, map[int64][]int64{parentID: {childID}}, graph)
	})
}

func TestCancelRun(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		jobID, err := s.CreateJob(ctx, newJob("a", "c", 0))
		require.NoError(t, err)
		ex := heartbeat(t, s, "x", 7, 1)
		run, _, err := s.InsertRun(ctx, 0, store.NewRun{JobID: jobID, ScheduledAt: 5, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 2})
		require.NoError(t, err)
		_, err = s.StartRun(ctx, 0, run.ID, 0, []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: ex.ID}, {Slot: 1, Attempt: 1, ExecutorID: ex.ID}})
		require.NoError(t, err)
		active, ok, err := runstate.New(s).Cancel(ctx, run.ID, msg.New(msg.RunCancelledByReason, "user", "ops", "reason", "said so"))
		require.NoError(t, err)
		require.True(t, ok)
		require.Len(t, active, 2)
		require.Equal(t, "http://127.0.0.1:7", active[0].Address)
		_, ok, err = runstate.New(s).Cancel(ctx, run.ID, msg.New(msg.RunCancelledBy, "user", "ops"))
		require.NoError(t, err)
		require.False(t, ok, "a finished run cannot be cancelled")
		r, err := s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunCancelled, r.Status)
		require.Equal(t, "cancelled by ops: said so", r.Error)
		require.Equal(t, msg.RunCancelledByReason, r.ErrorMsg.Code, "the reason as a code, for the console")
		stale, err := s.StaleTokens(ctx, ex.ID, []int64{active[0].Token, active[1].Token})
		require.NoError(t, err)
		require.Len(t, stale, 2, "the executor is told to stop both tokens")
		ok, err = runstate.New(s).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: active[0].Token, Status: store.AttemptSucceeded}, ExecutorID: ex.ID})
		require.NoError(t, err)
		require.False(t, ok, "late result of a cancelled attempt is rejected")
	})
}

func TestSetNextFireGroupsAndCase(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		want := map[int64]sql.NullInt64{}
		for i := range 30 {
			id, err := s.CreateJob(ctx, newJob("a", "n"+itoa(i), 1))
			require.NoError(t, err)
			switch {
			case i < 20: // a herd: one statement
				want[id] = sql.NullInt64{Int64: 5000, Valid: true}
			case i < 25: // a second group
				want[id] = sql.NullInt64{Int64: 6000, Valid: true}
			case i == 25: // never fires again
				want[id] = sql.NullInt64{}
			default: // singletons: the CASE statement
				want[id] = sql.NullInt64{Int64: int64(7000 + i), Valid: true}
			}
		}
		require.NoError(t, s.Tx(ctx, func(tx *store.Tx) error { return tx.SetNextFire(ctx, want) }))
		for id, v := range want {
			j, err := s.Job(ctx, id)
			require.NoError(t, err)
			require.Equal(t, v, j.NextFireAt, "job %d", id)
		}
	})
}

func TestSlotStatsAndExecutorSpeed(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		jobID, err := s.CreateJob(ctx, newJob("a", "stats", 0))
		require.NoError(t, err)
		ex := heartbeat(t, s, "x", 1, 1)
		require.Equal(t, 1.0, ex.Speed)
		runOnce := func(key int64, dur int64) {
			run, _, err := s.InsertRun(ctx, 0, store.NewRun{JobID: jobID, ScheduledAt: key, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 1})
			require.NoError(t, err)
			_, err = s.StartRun(ctx, 0, run.ID, 0, []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: ex.ID}})
			require.NoError(t, err)
			atts, err := s.Attempts(ctx, run.ID)
			require.NoError(t, err)
			ok, err := runstate.New(s).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: atts[0].Token, Status: store.AttemptSucceeded, StartedAt: 1000, FinishedAt: 1000 + dur, Processed: 10}, ExecutorID: ex.ID})
			require.NoError(t, err)
			require.True(t, ok)
		}
		runOnce(1, 1000)
		stats, err := s.SlotStats(ctx, jobID)
		require.NoError(t, err)
		require.Len(t, stats, 1)
		require.InDelta(t, 1000, stats[0].CostMS, 0.01, "first sample taken as is")
		require.Equal(t, ex.ID, stats[0].LastExecutor.Int64)
		// The same slot takes twice as long on another executor: that one
		// looks slower (a cost measured on the same executor says nothing
		// about its speed).
		runOnce(2, 1000)
		ex2 := heartbeat(t, s, "y", 2, 1)
		ex = ex2
		runOnce(3, 2000)
		stats, err = s.SlotStats(ctx, jobID)
		require.NoError(t, err)
		require.InDelta(t, 1000*0.7+2000*0.3, stats[0].CostMS, 0.01)
		require.Equal(t, 3, stats[0].Samples)
		ex, err = s.Executor(ctx, ex2.ID)
		require.NoError(t, err)
		require.InDelta(t, 0.8+0.2*0.5, ex.Speed, 0.001, "speed sample = predicted 1000 ms / actual 2000 ms")
		first, err := s.ExecutorByInstance(ctx, "x")
		require.NoError(t, err)
		require.Equal(t, 1.0, first.Speed, "own measurements do not move an executor's speed")
	})
}

func TestFrozenTransactionReleasesTheEpochOnMariaDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.MySQL(t)
	open := func() *store.Store {
		s, err := store.Open(ctx, store.Config{Driver: sqlfiles.MySQL, DSN: dsn, IdleTxTimeout: time.Second})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	old, successor := open(), open()
	_, err := old.Migrate(ctx)
	require.NoError(t, err)
	_, err = old.ClaimEpoch(ctx, 1, "old")
	require.NoError(t, err)
	var version string
	require.NoError(t, old.DB().Get(&version, `SELECT VERSION()`))
	if !strings.Contains(strings.ToLower(version), "mariadb") {
		t.Skip("idle_transaction_timeout is MariaDB only")
	}
	// The old leader freezes inside a scheduling transaction, holding the
	// shared lock on the leader row.
	tx, err := old.DB().BeginTxx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback() //nolint:errcheck // the server ends this frozen transaction itself (idle timeout)
	require.NoError(t, old.TxOf(tx).CheckEpoch(ctx, 1))
	start := time.Now()
	ok, err := successor.ClaimEpoch(ctx, 2, "successor")
	require.NoError(t, err)
	require.True(t, ok)
	waited := time.Since(start)
	t.Logf("successor claimed the epoch %s after the old leader froze in a transaction (idle timeout 1s)", waited.Round(time.Millisecond))
	require.Less(t, waited, 20*time.Second, "the frozen transaction was rolled back by the server")
	// The frozen transaction is gone: its next statement fails.
	require.Error(t, tx.Commit())
}

func TestRunsOfADeletedJobStayVisible(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		id, err := s.CreateJob(ctx, newJob("a", "gone", 0))
		require.NoError(t, err)
		run, _, err := s.InsertRun(ctx, 0, store.NewRun{JobID: id, ScheduledAt: 9, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 1})
		require.NoError(t, err)
		require.NoError(t, s.DeleteJob(ctx, id))
		r, err := s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, "a/gone", r.App+"/"+r.JobName, "the run keeps its job's names")
		require.True(t, r.JobDeleted)
		require.Equal(t, store.RunCancelled, r.Status, "its pending run ended with it")
		require.Equal(t, msg.RunJobDeleted, r.ErrorMsg.Code)
		runs, err := s.Runs(ctx, store.RunFilter{JobID: id})
		require.NoError(t, err)
		require.Len(t, runs, 1)
		require.Equal(t, "gone", runs[0].JobName)
		require.True(t, runs[0].JobDeleted)
		// A run inserted after the delete (a trigger that read the job
		// before): the leader finds it and cancels it.
		_, _, err = s.InsertRun(ctx, 0, store.NewRun{JobID: id, ScheduledAt: 10, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 1})
		require.NoError(t, err)
		pending, err := s.PendingPage(ctx, 100, store.PendingCursor{}, 10)
		require.NoError(t, err)
		require.Len(t, pending, 1, "a pending run of a deleted job is found (and then cancelled by the leader)")
		require.False(t, pending[0].JobExists)
	})
}

// TestRetryBudgetCountsFailuresOnly: a slot moved off a lost executor twice
// keeps its whole retry budget; only failed attempts use it up, and a retry
// by hand starts a fresh budget.
func TestRetryBudgetCountsFailuresOnly(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		ex := heartbeat(t, s, "ex", 1, 1)
		j := newJob("a", "retry-once", 0)
		j.RetryMax = 1
		jobID, err := s.CreateJob(ctx, j)
		require.NoError(t, err)
		run := startRun(t, s, 1, jobID, ex.ID)
		current := func() store.Attempt { return currentAttempt(t, s, run.ID, 0) }
		// Two moves (executor lost twice): attempts 2 and 3, no failure yet.
		for range 2 {
			_, err := s.Reassign(ctx, 1, current(), ex.ID, 0)
			require.NoError(t, err)
		}
		a := current()
		require.Equal(t, 3, a.Attempt)
		require.Zero(t, a.Failures)
		fail := func(a store.Attempt) {
			ok, err := runstate.New(s).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: a.Token, Status: store.AttemptFailed, Error: "boom", FinishedAt: 10}, ExecutorID: ex.ID})
			require.NoError(t, err)
			require.True(t, ok)
		}
		fail(a)
		cands, err := s.RetryCandidates(ctx, 10)
		require.NoError(t, err)
		require.Len(t, cands, 1, "the first failure may be retried although the slot ran three times")
		r, err := s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, r.Status, "a retryable failure keeps the run running")

		tok, err := s.Retry(ctx, 1, cands[0])
		require.NoError(t, err)
		require.NotZero(t, tok)
		done, err := s.PlaceAttempts(ctx, 1, 0, []store.Placement{{Token: tok, ExecutorID: ex.ID}})
		require.NoError(t, err)
		require.Len(t, done, 1)
		a = current()
		require.Equal(t, 1, a.Failures)
		fail(a)
		cands, err = s.RetryCandidates(ctx, 10)
		require.NoError(t, err)
		require.Empty(t, cands, "retry_max 1: the second failure is final")
		r, err = s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunFailed, r.Status)
		alarms, err := s.Alarms(ctx, 0, 10)
		require.NoError(t, err)
		kinds := map[string]int{}
		for _, a := range alarms {
			kinds[a.Kind]++
			require.Equal(t, run.ID, a.RunID.Int64)
		}
		require.Equal(t, map[string]int{store.AlarmSlotDead: 1, store.AlarmRunFailed: 1}, kinds,
			"the first, retried failure raises nothing; the final one raises slot_dead and run_failed")

		n, err := runstate.New(s).Retry(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		a = current()
		require.Zero(t, a.Failures, "a retry by hand starts a fresh budget")
	})
}

// TestReleasedTokensMoveOnHeartbeat: tokens an executor gave back that are
// still current on it (the leader asked, then stopped leading) become
// unplaced attempts with the same failure count; others are left alone.
func TestReleasedTokensMoveOnHeartbeat(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ex, other, jobID := leadTwoExecutors(t, s)
		run := startRun(t, s, 1, jobID, ex.ID, ex.ID, other.ID)
		atts, err := s.Attempts(ctx, run.ID)
		require.NoError(t, err)
		require.NoError(t, s.MarkStarted(ctx, ex.ID, []int64{atts[1].Token}))

		// Slot 0 queued: moves. Slot 1 started: stays. Slot 2 is another
		// executor's: stays. An unknown token is ignored.
		n, err := s.ReleaseAttempts(ctx, ex.ID, []int64{atts[0].Token, atts[1].Token, atts[2].Token, 999999})
		require.NoError(t, err)
		require.Equal(t, 1, n)
		again, err := s.ReleaseAttempts(ctx, ex.ID, []int64{atts[0].Token})
		require.NoError(t, err)
		require.Zero(t, again, "idempotent")
		stale, err := s.StaleTokens(ctx, ex.ID, []int64{atts[0].Token, atts[1].Token})
		require.NoError(t, err)
		require.Equal(t, []int64{atts[0].Token}, stale, "the executor is told to forget the moved token only")
		waiting, err := s.UnplacedAttempts(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, waiting, 1)
		require.Equal(t, 0, waiting[0].Slot)
		require.Equal(t, 2, waiting[0].Attempt)
		require.Equal(t, ex.ID, waiting[0].PreviousExecutor.Int64)
	})
}

// TestFinishAttemptsBatch: one batch with results of two runs, a stale token
// and a result delivered twice settles both runs once, and reports each
// result's acceptance in order.
func TestFinishAttemptsBatch(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		ex := heartbeat(t, s, "ex", 1, 4)
		jobID, err := s.CreateJob(ctx, newJob("a", "j", 0))
		require.NoError(t, err)
		var tokens []int64
		var runs []int64
		for i := range 2 {
			run, _, err := s.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: int64(i + 1), TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 2})
			require.NoError(t, err)
			_, err = s.StartRun(ctx, 1, run.ID, 0, []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: ex.ID}, {Slot: 1, Attempt: 1, ExecutorID: ex.ID}})
			require.NoError(t, err)
			atts, err := s.Attempts(ctx, run.ID)
			require.NoError(t, err)
			for _, a := range atts {
				tokens = append(tokens, a.Token)
			}
			runs = append(runs, run.ID)
		}
		ok := func(tok int64) store.SlotOutcome {
			return store.SlotOutcome{SlotResult: protocol.SlotResult{Token: tok, Status: store.AttemptSucceeded, StartedAt: 5, FinishedAt: 9}, ExecutorID: ex.ID}
		}
		acc, err := runstate.New(s).FinishAttempts(ctx, []store.SlotOutcome{ok(tokens[0]), ok(tokens[2]), ok(999999), ok(tokens[1]), ok(tokens[0]),
			{ExecutorID: ex.ID, SlotResult: protocol.SlotResult{Token: tokens[3], Status: store.AttemptFailed, Error: "boom", FinishedAt: 9}}})
		require.NoError(t, err)
		require.Equal(t, []bool{true, true, false, true, true, true}, acc)
		r0, err := s.Run(ctx, runs[0])
		require.NoError(t, err)
		require.Equal(t, store.RunSucceeded, r0.Status)
		require.Equal(t, 2, r0.SlotsSucceeded)
		r1, err := s.Run(ctx, runs[1])
		require.NoError(t, err)
		require.Equal(t, store.RunPartiallyFailed, r1.Status)
	})
}

// TestUncertainRecordsRaiseAnAlarm: an accepted result reporting uncertain
// records raises one records_uncertain alarm for its job and run.
func TestUncertainRecordsRaiseAnAlarm(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		ex := heartbeat(t, s, "ex", 1, 1)
		jobID, err := s.CreateJob(ctx, newJob("a", "ledger", 0))
		require.NoError(t, err)
		run := startRun(t, s, 1, jobID, ex.ID)
		atts, err := s.Attempts(ctx, run.ID)
		require.NoError(t, err)
		o := store.SlotOutcome{SlotResult: protocol.SlotResult{Token: atts[0].Token, Status: store.AttemptSucceeded, StartedAt: 1, FinishedAt: 2, Processed: 97, Uncertain: 3}, ExecutorID: ex.ID}
		for range 2 { // delivered twice: one alarm
			ok, err := runstate.New(s).FinishAttempt(ctx, o)
			require.NoError(t, err)
			require.True(t, ok)
		}
		alarms, err := s.Alarms(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, alarms, 1)
		require.Equal(t, store.AlarmRecordsUncertain, alarms[0].Kind)
		require.Equal(t, jobID, alarms[0].JobID.Int64)
		require.Equal(t, run.ID, alarms[0].RunID.Int64)
		require.Contains(t, alarms[0].Message, "3 record(s)")
	})
}

// A run keeps the records policy and time zone its job had when the run was
// created: editing the job while the run is active does not move the run's
// later attempts to another dedup scope.
func TestRunKeepsItsRecordsPolicy(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 3, "me")
		require.NoError(t, err)
		j := newJob("a", "policy", 0)
		j.TimeZone, j.DedupScope, j.UncertainPolicy, j.RecordMaxAttempts = "Asia/Shanghai", "settle:{date}", "skip", 4
		jobID, err := s.CreateJob(ctx, j)
		require.NoError(t, err)
		j, err = s.Job(ctx, jobID)
		require.NoError(t, err)
		plain, err := s.CreateJob(ctx, newJob("a", "plain", 0))
		require.NoError(t, err)
		pj, err := s.Job(ctx, plain)
		require.NoError(t, err)
		ex := heartbeat(t, s, "ex", 1, 4)

		// Two runs in one multi-row insert (as the firing loop does) and one alone.
		var n int64
		require.NoError(t, s.Tx(ctx, func(tx *store.Tx) (err error) {
			n, err = tx.InsertRuns(ctx, 3, []store.NewRun{
				jobrules.NewRun(j, 1000, store.TriggerCron, store.RunPending),
				jobrules.NewRun(pj, 1000, store.TriggerCron, store.RunPending),
			})
			return err
		}))
		require.Equal(t, int64(2), n)
		manual, _, err := s.InsertRun(ctx, 3, jobrules.NewRun(j, 2000, store.TriggerManual, store.RunPending))
		require.NoError(t, err)

		got, err := s.Job(ctx, jobID)
		require.NoError(t, err)
		got.TimeZone, got.DedupScope, got.UncertainPolicy, got.RecordMaxAttempts = "UTC", "other", "retry", 9
		require.NoError(t, s.UpdateJob(ctx, got))

		runs, err := s.Runs(ctx, store.RunFilter{})
		require.NoError(t, err)
		for _, r := range runs {
			started, err := s.StartRun(ctx, 3, r.ID, 0, []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: ex.ID}, {Slot: 1, Attempt: 1, ExecutorID: ex.ID},
				{Slot: 2, Attempt: 1, ExecutorID: ex.ID}, {Slot: 3, Attempt: 1, ExecutorID: ex.ID}})
			require.NoError(t, err)
			require.True(t, started)
		}
		unacked, err := s.UnackedFor(ctx, ex.ID, 100)
		require.NoError(t, err)
		require.Len(t, unacked, 3*4)
		for _, d := range unacked {
			if d.JobID == plain {
				require.Equal(t, [4]any{"UTC", "", "", 0}, [4]any{d.TimeZone, d.DedupScope, d.UncertainPolicy, d.RecordMaxAttempts}, "a job without a policy")
				continue
			}
			require.Equal(t, [4]any{"Asia/Shanghai", "settle:{date}", "skip", 4}, [4]any{d.TimeZone, d.DedupScope, d.UncertainPolicy, d.RecordMaxAttempts},
				"run %d keeps the policy of its creation (manual run %d)", d.RunID, manual.ID)
		}
	})
}

// TestFinishAttemptsSettlesManyRunsAtOnce: one batch of results of one-slot
// runs (the herd) settles every run with the database clock as finished_at,
// triggers the children of each succeeded parent, raises run_failed for the
// failed one, and counts two samples of the same slot one after the other.
func TestFinishAttemptsSettlesManyRunsAtOnce(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		ex := heartbeat(t, s, "ex", 1, 64)
		childID, err := s.CreateJob(ctx, newJob("a", "child", 0))
		require.NoError(t, err)
		parent := newJob("a", "parent", 0)
		parent.SlotCount = 1
		parent.ChildJobIDs = strconv.FormatInt(childID, 10)
		parentID, err := s.CreateJob(ctx, parent)
		require.NoError(t, err)
		before, err := s.Now(ctx)
		require.NoError(t, err)

		var outs []store.SlotOutcome
		var runs []int64
		for i := range 40 {
			run, atts := startRunAt(t, s, 1, parentID, int64(i+1), ex.ID)
			o := store.SlotOutcome{SlotResult: protocol.SlotResult{Token: atts[0].Token, Status: store.AttemptSucceeded, StartedAt: 1000, FinishedAt: 2000, Processed: int64(i)}, ExecutorID: ex.ID}
			switch i {
			case 0:
				o.FinishedAt = 3000 // the first sample of slot 0: 2000 ms
			case 7:
				o.Status, o.Error = store.AttemptFailed, "boom"
			}
			outs = append(outs, o)
			runs = append(runs, run.ID)
		}
		acc, err := runstate.New(s).FinishAttempts(ctx, outs)
		require.NoError(t, err)
		for i, ok := range acc {
			require.True(t, ok, "result %d", i)
		}
		after, err := s.Now(ctx)
		require.NoError(t, err)
		for i, id := range runs {
			r, err := s.Run(ctx, id)
			require.NoError(t, err)
			want := store.RunSucceeded
			if i == 7 {
				want = store.RunFailed
			}
			require.Equal(t, want, r.Status, "run %d", i)
			require.GreaterOrEqual(t, r.FinishedAt.Int64, before.UnixMilli(), "finished_at is the database clock when the run settled, not the executor's 2000")
			require.LessOrEqual(t, r.FinishedAt.Int64, after.UnixMilli())
		}
		children, err := s.Runs(ctx, store.RunFilter{JobID: childID, Limit: 100})
		require.NoError(t, err)
		require.Len(t, children, 39, "one child run per succeeded parent run")
		alarms, err := s.Alarms(ctx, 0, 100)
		require.NoError(t, err)
		kinds := map[string]int{}
		for _, a := range alarms {
			kinds[a.Kind]++
		}
		require.Equal(t, map[string]int{store.AlarmRunFailed: 1, store.AlarmSlotDead: 1}, kinds)

		// 39 samples of slot 0 in batch order: the first as is, then each
		// smoothed in.
		want := 2000.0
		for range 38 {
			want = want*(1-store.CostAlpha) + 1000*store.CostAlpha
		}
		stats, err := s.SlotStats(ctx, parentID)
		require.NoError(t, err)
		require.Len(t, stats, 1)
		require.Equal(t, 39, stats[0].Samples)
		require.InDelta(t, want, stats[0].CostMS, 0.001)
	})
}

// TestReconcileLosesWhatTheProcessNoLongerReports: a heartbeat built after
// the process accepted batch N loses the attempts it acknowledged in batch N
// or earlier and does not report (running, queued, released or unsent), and
// nothing else: not a token it reports, not one acknowledged in a later batch
// (the heartbeat may have been built before that batch), not one whose
// executor gave no batch number, and nothing when the heartbeat carries none.
func TestReconcileLosesWhatTheProcessNoLongerReports(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		ex := heartbeat(t, s, "forgetful", 1, 8)
		jobID, err := s.CreateJob(ctx, newJob("a", "reconcile", 0))
		require.NoError(t, err)
		run, atts := startRunAt(t, s, 1, jobID, 1, ex.ID, ex.ID, ex.ID, ex.ID, ex.ID)
		// Slots 0 and 1 accepted in batch 3 (0 started), 2 in batch 4,
		// 3 by an executor that does not number batches; 4 never acked.
		require.NoError(t, s.RecordAccepted(ctx, ex.ID, []int64{atts[1].Token}, []int64{atts[0].Token}, 3))
		require.NoError(t, s.RecordAccepted(ctx, ex.ID, []int64{atts[2].Token}, nil, 4))
		require.NoError(t, s.AckAttempts(ctx, ex.ID, []int64{atts[3].Token}))
		// A later acknowledgement does not move a token's batch.
		require.NoError(t, s.RecordAccepted(ctx, ex.ID, nil, []int64{atts[1].Token}, 9))

		moved, err := s.Reconcile(ctx, ex.ID, 0, nil)
		require.NoError(t, err)
		require.Empty(t, moved, "a heartbeat without a batch number moves nothing")
		moved, err = s.Reconcile(ctx, ex.ID, 3, []int64{atts[0].Token, atts[1].Token})
		require.NoError(t, err)
		require.Empty(t, moved, "everything accepted by batch 3 is reported")

		moved, err = s.Reconcile(ctx, ex.ID, 3, []int64{atts[1].Token})
		require.NoError(t, err)
		require.Equal(t, []int64{atts[0].Token}, moved, "slot 0 is gone from the process")
		again, err := s.Reconcile(ctx, ex.ID, 3, []int64{atts[1].Token})
		require.NoError(t, err)
		require.Empty(t, again, "moved once")

		all, err := s.Attempts(ctx, run.ID)
		require.NoError(t, err)
		bySlot := map[int][]store.Attempt{}
		for _, a := range all {
			bySlot[a.Slot] = append(bySlot[a.Slot], a)
		}
		require.Len(t, bySlot[0], 2)
		require.Equal(t, store.AttemptLost, bySlot[0][0].Status)
		require.False(t, bySlot[0][0].Current)
		require.True(t, bySlot[0][1].Current)
		require.False(t, bySlot[0][1].ExecutorID.Valid, "unplaced: the leader places it again")
		require.Equal(t, 2, bySlot[0][1].Attempt)
		for slot := 1; slot <= 4; slot++ {
			require.Len(t, bySlot[slot], 1, "slot %d stays", slot)
			require.True(t, bySlot[slot][0].Current)
		}

		// Heartbeats that report nothing: one built after batch 3 loses
		// slot 1 (its batch stayed 3), one after batch 9 slot 2; 3 (no
		// batch number) and 4 (never acked) stay.
		moved, err = s.Reconcile(ctx, ex.ID, 3, nil)
		require.NoError(t, err)
		require.Equal(t, []int64{atts[1].Token}, moved)
		moved, err = s.Reconcile(ctx, ex.ID, 9, nil)
		require.NoError(t, err)
		require.Equal(t, []int64{atts[2].Token}, moved)
	})
}

// TestRestartedExecutorLosesItsPreviousSlots: a heartbeat with a new
// incarnation of a known instance (it restarted under the same instance id)
// supersedes the attempts its previous process held as lost, except the
// tokens the new process reports as its own (results restored from its
// journal), and replaces them by unplaced attempts with the same failure
// count; the first incarnation recorded, or a stale one, moves nothing.
func TestRestartedExecutorLosesItsPreviousSlots(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		ex := heartbeat(t, s, "stable", 1, 4)
		jobID, err := s.CreateJob(ctx, newJob("a", "restart", 0))
		require.NoError(t, err)
		run, atts := startRunAt(t, s, 1, jobID, 1, ex.ID, ex.ID, ex.ID)
		moved, changed, err := s.Reincarnate(ctx, ex.ID, "", "first", nil)
		require.NoError(t, err)
		require.True(t, changed)
		require.Zero(t, moved, "the first incarnation recorded: nothing to take over from")
		got, err := s.ExecutorByInstance(ctx, "stable")
		require.NoError(t, err)
		require.Equal(t, "first", got.Incarnation)

		// The process restarts; its journal still holds the result of slot 2.
		moved, changed, err = s.Reincarnate(ctx, ex.ID, "first", "second", []int64{atts[2].Token})
		require.NoError(t, err)
		require.True(t, changed)
		require.Equal(t, 2, moved)
		again, changed, err := s.Reincarnate(ctx, ex.ID, "first", "third", nil)
		require.NoError(t, err)
		require.False(t, changed, "a heartbeat of a process already replaced changes nothing")
		require.Zero(t, again)

		all, err := s.Attempts(ctx, run.ID)
		require.NoError(t, err)
		bySlot := map[int][]store.Attempt{}
		for _, a := range all {
			bySlot[a.Slot] = append(bySlot[a.Slot], a)
		}
		for _, slot := range []int{0, 1} {
			require.Len(t, bySlot[slot], 2)
			old, next := bySlot[slot][0], bySlot[slot][1]
			require.Equal(t, store.AttemptLost, old.Status)
			require.False(t, old.Current)
			require.True(t, next.Current)
			require.Equal(t, store.AttemptAssigned, next.Status)
			require.False(t, next.ExecutorID.Valid, "unplaced: the leader places it again")
			require.Equal(t, old.Attempt+1, next.Attempt)
		}
		require.Len(t, bySlot[2], 1, "the slot whose result the new process holds stays")
		require.True(t, bySlot[2][0].Current)
	})
}

// TestRunsSayWhenTheirFirstSlotStarted: a run is "started" when it is
// assigned, but what users feel is when a slot starts on an executor: the
// run read alone and in lists carries that instant once an executor says
// a slot runs, and the executors' loads count the slot.
func TestRunsSayWhenTheirFirstSlotStarted(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		jobID, err := s.CreateJob(ctx, newJob("a", "waits", 0))
		require.NoError(t, err)
		ex := heartbeat(t, s, "ex-a", 1, 1)
		run, _, err := s.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 2})
		require.NoError(t, err)
		started, err := s.StartRun(ctx, 1, run.ID, time.Minute, []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: ex.ID}, {Slot: 1, Attempt: 1, ExecutorID: ex.ID}})
		require.NoError(t, err)
		require.True(t, started)

		got, err := s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.True(t, got.StartedAt.Valid, "assigned")
		require.False(t, got.FirstStartedAt.Valid, "no slot runs yet: both are queued on a one-slot executor")
		loads, err := s.Loads(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, loads[ex.ID].Active)

		atts, err := s.Attempts(ctx, run.ID)
		require.NoError(t, err)
		before, err := s.NowMS(ctx)
		require.NoError(t, err)
		require.NoError(t, s.MarkStarted(ctx, ex.ID, []int64{atts[0].Token}))
		got, err = s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.True(t, got.FirstStartedAt.Valid)
		require.GreaterOrEqual(t, got.FirstStartedAt.Int64, before)
		list, err := s.Runs(ctx, store.RunFilter{JobID: jobID, Limit: 10})
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, got.FirstStartedAt, list[0].FirstStartedAt, "lists carry it too")
	})
}
