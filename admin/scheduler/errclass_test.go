package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Error classes (docs/failures.md): a permanent failure is not retried
// although retry_max allows more attempts, and ends the slot at once (the
// run settles as if its retries were used up, with slot_dead); a failure
// that asked for a retry after 60 s is not retried before, although the
// backoff (at most 1 s) has passed; an old executor's result without a
// class is recorded retryable.
func TestPermanentIsNotRetriedAndRetryAfterWaits(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		s := leading(t, st, c, &fakePusher{}, 1)
		online(t, st, store.ExecutorInfo{InstanceID: "a", App: "app", Address: "http://127.0.0.1:1", Capacity: 4})
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "payments", Handler: "h", Cron: "@yearly", SlotCount: 3, RetryMax: 3, RetryBackoffMS: 1000}}, t0)
		run, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: j.ID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 3})
		require.NoError(t, err)
		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		attempts := func() map[int][]store.Attempt {
			atts, err := st.Attempts(ctx, run.ID)
			require.NoError(t, err)
			out := map[int][]store.Attempt{}
			for _, a := range atts {
				out[a.Slot] = append(out[a.Slot], a)
			}
			return out
		}
		first := attempts()
		require.Len(t, first, 3)
		m := runstate.New(st)
		finish := func(a store.Attempt, r protocol.SlotResult) {
			t.Helper()
			r.Token = a.Token
			ok, err := m.FinishAttempt(ctx, store.SlotOutcome{SlotResult: r, ExecutorID: a.ExecutorID.Int64})
			require.NoError(t, err)
			require.True(t, ok)
		}
		finish(first[0][0], protocol.SlotResult{Status: store.AttemptFailed, Error: "account closed", ErrorClass: protocol.ClassPermanent, FinishedAt: t0.UnixMilli()})
		finish(first[1][0], protocol.SlotResult{Status: store.AttemptFailed, Error: "rate limited", ErrorClass: protocol.ClassRetryable, RetryAfterMS: 60_000, FinishedAt: t0.UnixMilli()})
		finish(first[2][0], protocol.SlotResult{Status: store.AttemptFailed, Error: "old executor", FinishedAt: t0.UnixMilli()})
		r, err := st.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, r.Status, "slots 1 and 2 have retries left")

		// Past the backoff: only slot 2 is retried; slot 0 never, slot 1 not yet.
		c.Set(t0.Add(2 * time.Second))
		require.NoError(t, s.RetryFailed(ctx, 1))
		require.Equal(t, int64(1), s.Stats().Retried)
		now := attempts()
		require.Len(t, now[0], 1, "a permanent failure is not retried")
		require.Len(t, now[1], 1, "not retried before its retry-after")
		require.Len(t, now[2], 2, "a result without a class is retried as before")
		require.Equal(t, protocol.ClassPermanent, now[0][0].ErrorClass)
		require.Equal(t, protocol.ClassRetryable, now[1][0].ErrorClass)
		require.Equal(t, protocol.ClassRetryable, now[2][0].ErrorClass)
		require.Empty(t, now[2][1].ErrorClass, "an unfinished attempt has no class")

		// Just before the 60 s: still not; after: retried.
		c.Set(t0.Add(59 * time.Second))
		require.NoError(t, s.RetryFailed(ctx, 1))
		require.Len(t, attempts()[1], 1)
		c.Set(t0.Add(60*time.Second + time.Millisecond))
		require.NoError(t, s.RetryFailed(ctx, 1))
		require.Len(t, attempts()[1], 2)
		c.Set(t0.Add(time.Hour))
		require.NoError(t, s.RetryFailed(ctx, 1))
		require.Len(t, attempts()[0], 1, "a permanent failure is never retried")
		require.Equal(t, int64(2), s.Stats().Retried)

		// The retried slots succeed (placed first): the run ends with its
		// permanent failure counted as a slot with no retry left.
		require.NoError(t, s.PlaceUnplaced(ctx, 1))
		s.WaitPushes()
		now = attempts()
		finish(now[1][1], protocol.SlotResult{Status: store.AttemptSucceeded, FinishedAt: t0.Add(time.Hour).UnixMilli()})
		finish(now[2][1], protocol.SlotResult{Status: store.AttemptSucceeded, FinishedAt: t0.Add(time.Hour).UnixMilli()})
		r, err = st.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunPartiallyFailed, r.Status)
		require.Equal(t, 1, r.SlotsFailed)
		alarms, err := st.Alarms(ctx, 0, 100)
		require.NoError(t, err)
		dead := 0
		for _, a := range alarms {
			if a.Kind == store.AlarmSlotDead && a.RunID.Int64 == run.ID {
				dead++
			}
		}
		require.Equal(t, 1, dead, "the permanent failure raised slot_dead")
	})
}

// A one-slot run whose slot fails permanently ends failed at once, with
// retries left; the slot's attempt shows the class.
func TestPermanentFailureEndsTheRun(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		s := leading(t, st, c, &fakePusher{}, 1)
		online(t, st, store.ExecutorInfo{InstanceID: "a", App: "app", Address: "http://127.0.0.1:1", Capacity: 1})
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "settle", Handler: "h", Cron: "@yearly", SlotCount: 1, RetryMax: 5, RetryBackoffMS: 1000}}, t0)
		run, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: j.ID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 1})
		require.NoError(t, err)
		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		atts, err := st.Attempts(ctx, run.ID)
		require.NoError(t, err)
		require.Len(t, atts, 1)
		ok, err := runstate.New(st).FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{
			Token: atts[0].Token, Status: store.AttemptFailed, Error: "invalid IBAN", ErrorClass: protocol.ClassPermanent, FinishedAt: t0.UnixMilli(),
		}, ExecutorID: atts[0].ExecutorID.Int64})
		require.NoError(t, err)
		require.True(t, ok)
		r, err := st.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunFailed, r.Status)
		c.Set(t0.Add(time.Hour))
		require.NoError(t, s.RetryFailed(ctx, 1))
		require.Zero(t, s.Stats().Retried)
		atts, err = st.Attempts(ctx, run.ID)
		require.NoError(t, err)
		require.Len(t, atts, 1)
		require.Equal(t, protocol.ClassPermanent, atts[0].ErrorClass)
		require.Equal(t, "invalid IBAN", atts[0].Error)
	})
}
