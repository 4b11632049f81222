package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
)

// TestLeasesRunFromTheDatabaseClock: every lease the store writes (an
// attempt's lease_until when a run starts, when a slot is moved or stolen,
// when an unplaced attempt is placed, and a session's expiry) is the
// database clock at the write plus the duration asked for, never an
// instant of the caller's clock (docs/architecture.md, "Clocks").
func TestLeasesRunFromTheDatabaseClock(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ex, other, jobID := leadTwoExecutors(t, s)
		// dbNow brackets a write with the database clock.
		dbNow := func() int64 {
			now, err := s.Now(ctx)
			require.NoError(t, err)
			return now.UnixMilli()
		}
		// leased checks that at is the database clock during the write plus
		// lease.
		leased := func(what string, at, before, after int64, lease time.Duration) {
			t.Helper()
			require.GreaterOrEqual(t, at, before+lease.Milliseconds(), "%s: lease set from the database clock", what)
			require.LessOrEqual(t, at, after+lease.Milliseconds(), "%s: lease set from the database clock", what)
		}
		current := func(runID int64, slot int) store.Attempt { return currentAttempt(t, s, runID, slot) }

		// Start.
		run, _, err := s.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 3})
		require.NoError(t, err)
		before := dbNow()
		started, err := s.StartRun(ctx, 1, run.ID, time.Hour, []store.NewAttempt{
			{Slot: 0, Attempt: 1, ExecutorID: ex.ID}, {Slot: 1, Attempt: 1, ExecutorID: ex.ID}, {Slot: 2, Attempt: 1, ExecutorID: ex.ID}})
		require.NoError(t, err)
		require.True(t, started)
		after := dbNow()
		for slot := range 3 {
			a := current(run.ID, slot)
			leased("start", a.LeaseUntil.Int64, before, after, time.Hour)
			require.Equal(t, a.DispatchedAt.Int64+time.Hour.Milliseconds(), a.LeaseUntil.Int64, "dispatched and leased at the same database instant")
		}

		// Reassign (executor lost) and Steal (idle executor).
		before = dbNow()
		tok, err := s.Reassign(ctx, 1, current(run.ID, 0), other.ID, 2*time.Hour)
		require.NoError(t, err)
		require.NotZero(t, tok)
		tok, err = s.Steal(ctx, 1, current(run.ID, 1), other.ID, 3*time.Hour)
		require.NoError(t, err)
		require.NotZero(t, tok)
		after = dbNow()
		leased("reassign", current(run.ID, 0).LeaseUntil.Int64, before, after, 2*time.Hour)
		leased("steal", current(run.ID, 1).LeaseUntil.Int64, before, after, 3*time.Hour)

		// Place: a released slot waits unplaced, then is placed again.
		n, err := s.ReleaseAttempts(ctx, ex.ID, []int64{current(run.ID, 2).Token})
		require.NoError(t, err)
		require.Equal(t, 1, n)
		waiting := current(run.ID, 2)
		require.False(t, waiting.LeaseUntil.Valid, "an unplaced attempt has no lease")
		before = dbNow()
		done, err := s.PlaceAttempts(ctx, 1, 4*time.Hour, []store.Placement{{Token: waiting.Token, ExecutorID: other.ID}})
		require.NoError(t, err)
		require.Len(t, done, 1)
		after = dbNow()
		leased("place", current(run.ID, 2).LeaseUntil.Int64, before, after, 4*time.Hour)

		// Session expiry, checked by SessionUser with the same clock.
		uid, err := s.CreateUser(ctx, "ops", "hash", store.RoleOperator)
		require.NoError(t, err)
		before = dbNow()
		require.NoError(t, s.CreateSession(ctx, "h", uid, 5*time.Hour))
		after = dbNow()
		var expires int64
		require.NoError(t, s.DB().GetContext(ctx, &expires, `SELECT expires_at FROM user_session WHERE token_hash = 'h'`))
		leased("session", expires, before, after, 5*time.Hour)
	})
}

// leadTwoExecutors claims epoch 1 and registers executors "ex" and "other"
// of app "a" (capacity 1) and a job of that app.
func leadTwoExecutors(t *testing.T, s *store.Store) (ex, other store.Executor, jobID int64) {
	t.Helper()
	ctx := context.Background()
	_, err := s.ClaimEpoch(ctx, 1, "me")
	require.NoError(t, err)
	ex, other = heartbeat(t, s, "ex", 1, 1), heartbeat(t, s, "other", 2, 1)
	jobID, err = s.CreateJob(ctx, newJob("a", "j", 0))
	require.NoError(t, err)
	return ex, other, jobID
}

// currentAttempt returns the current attempt of a slot of a run.
func currentAttempt(t *testing.T, s *store.Store, runID int64, slot int) store.Attempt {
	t.Helper()
	atts, err := s.Attempts(context.Background(), runID)
	require.NoError(t, err)
	for _, a := range atts {
		if a.Current && a.Slot == slot {
			return a
		}
	}
	t.Fatalf("no current attempt of slot %d of run %d", slot, runID)
	return store.Attempt{}
}
