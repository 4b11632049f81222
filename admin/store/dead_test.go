package store_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestDeadLettersWrittenOncePerDeadSlot: a permanent failure and a failure
// that uses up the retries each write exactly one dead letter, with what
// the attempt ran with; a slot retried then succeeded writes none. A
// replay runs the dead slots again as new attempts of the same run, is
// refused again unless forced, and the run settles as its slots end.
func TestDeadLettersWrittenOncePerDeadSlot(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		ex := heartbeat(t, s, "ex", 1, 3)
		j := newJob("a", "dead", 0)
		j.RetryMax, j.SlotCount, j.SlotParams, j.Params = 1, 3, "0=north,1=south", `{"day":"mon"}`
		jobID, err := s.CreateJob(ctx, j)
		require.NoError(t, err)
		run, _ := startRunAt(t, s, 1, jobID, 5000, ex.ID, ex.ID, ex.ID)
		m := runstate.New(s)
		finish := func(slot int, status, class string) int64 {
			t.Helper()
			a := currentAttempt(t, s, run.ID, slot)
			ok, err := m.FinishAttempt(ctx, store.SlotOutcome{ExecutorID: ex.ID, SlotResult: protocol.SlotResult{
				Token: a.Token, Status: status, Error: "boom " + class, ErrorClass: class, FinishedAt: 10, Processed: 7, Failed: 1}})
			require.NoError(t, err)
			require.True(t, ok)
			return a.Token
		}
		retry := func(slot int) {
			t.Helper()
			cands, err := s.RetryCandidates(ctx, 10)
			require.NoError(t, err)
			for _, c := range cands {
				if c.Slot == slot {
					tok, err := s.Retry(ctx, 1, c)
					require.NoError(t, err)
					_, err = s.PlaceAttempts(ctx, 1, 0, []store.Placement{{Token: tok, ExecutorID: ex.ID}})
					require.NoError(t, err)
					return
				}
			}
			t.Fatalf("slot %d is no retry candidate", slot)
		}
		dead := func() []store.DeadLetter {
			t.Helper()
			out, err := s.DeadLetters(ctx, store.DeadFilter{})
			require.NoError(t, err)
			return out
		}

		permanent := finish(0, store.AttemptFailed, protocol.ClassPermanent)
		require.Len(t, dead(), 1, "a permanent failure is dead at once")
		finish(1, store.AttemptFailed, protocol.ClassRetryable)
		finish(2, store.AttemptFailed, protocol.ClassTimeout)
		require.Len(t, dead(), 1, "a failure with a retry left is not dead")
		retry(1)
		retry(2)
		exhausted := finish(1, store.AttemptFailed, protocol.ClassRetryable)
		finish(2, store.AttemptSucceeded, "")
		letters := dead()
		require.Len(t, letters, 2, "one letter per dead slot; the retried and succeeded slot has none")

		d := letters[1] // newest first
		require.Equal(t, permanent, d.Token)
		require.Equal(t, "a", d.App)
		require.Equal(t, jobID, d.JobID)
		require.Equal(t, "dead", d.JobName)
		require.Equal(t, "noop", d.Handler)
		require.Equal(t, run.ID, d.RunID)
		require.Equal(t, int64(5000), d.ScheduledAt, "the run key")
		require.Equal(t, 0, d.Slot)
		require.Equal(t, 1, d.Attempt)
		ran, err := s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, ran.Params, d.Params, "the run's params, as the attempt ran")
		require.Equal(t, "north", d.SlotParam)
		require.Equal(t, "boom permanent", d.Error)
		require.Equal(t, protocol.ClassPermanent, d.ErrorClass)
		require.Equal(t, int64(7), d.Processed)
		require.Equal(t, int64(1), d.Failed)
		require.NotZero(t, d.DiedAt)
		require.False(t, d.ReplayedAt.Valid)
		e := letters[0]
		require.Equal(t, exhausted, e.Token)
		require.Equal(t, 1, e.Slot)
		require.Equal(t, 2, e.Attempt)
		require.Equal(t, "south", e.SlotParam)
		require.Equal(t, protocol.ClassRetryable, e.ErrorClass)

		r, err := s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunPartiallyFailed, r.Status)

		// Filters, paging and counts.
		for _, c := range []struct {
			f    store.DeadFilter
			want int
		}{
			{store.DeadFilter{Class: protocol.ClassPermanent}, 1},
			{store.DeadFilter{Class: protocol.ClassTimeout}, 0},
			{store.DeadFilter{App: "a", JobID: jobID, Handler: "noop"}, 2},
			{store.DeadFilter{App: "b"}, 0},
			{store.DeadFilter{Apps: []string{"b"}}, 0},
			{store.DeadFilter{Apps: []string{"a", "b"}}, 2},
			{store.DeadFilter{JobID: jobID + 1}, 0},
			{store.DeadFilter{FromMS: d.DiedAt + 3_600_000}, 0},
			{store.DeadFilter{ToMS: d.DiedAt + 3_600_000}, 2},
		} {
			got, err := s.DeadLetters(ctx, c.f)
			require.NoError(t, err)
			require.Len(t, got, c.want, "%+v", c.f)
			n, exact, err := s.CountDeadLetters(ctx, c.f, 0)
			require.NoError(t, err)
			require.True(t, exact)
			require.Equal(t, int64(c.want), n, "%+v", c.f)
		}
		page, err := s.DeadLetters(ctx, store.DeadFilter{Limit: 1})
		require.NoError(t, err)
		require.Equal(t, []int64{e.ID}, []int64{page[0].ID})
		page, err = s.DeadLetters(ctx, store.DeadFilter{Limit: 1, BeforeID: e.ID})
		require.NoError(t, err)
		require.Equal(t, d.ID, page[0].ID)
		n, exact, err := s.CountDeadLetters(ctx, store.DeadFilter{}, 1)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		require.False(t, exact, "more than the cap match: said, not hidden")

		// Replay both: new attempts of the same run, the run runs again.
		replayed, refused, err := m.Replay(ctx, runstate.Replay{IDs: []int64{d.ID, e.ID}, By: "ops", Params: sql.NullString{String: `{"day":"tue"}`, Valid: true}})
		require.NoError(t, err)
		require.Empty(t, refused)
		require.Len(t, replayed, 2)
		for _, x := range replayed {
			require.True(t, x.ReplayedAt.Valid)
			require.Equal(t, "ops", x.ReplayedBy)
			require.Equal(t, 1, x.Replays)
			a := currentAttempt(t, s, run.ID, x.Slot)
			require.Equal(t, a.Token, x.ReplayToken.Int64)
			require.Greater(t, a.Token, x.Token, "a newer token than the dead attempt's")
			require.Equal(t, store.AttemptAssigned, a.Status)
			require.False(t, a.ExecutorID.Valid, "unplaced: the leader places it")
			require.Zero(t, a.Failures, "a fresh retry budget")
		}
		r, err = s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, r.Status)
		require.Equal(t, int64(5000), r.ScheduledAt)

		_, refused, err = m.Replay(ctx, runstate.Replay{IDs: []int64{d.ID}, By: "ops"})
		require.NoError(t, err)
		require.Len(t, refused, 1)
		require.Equal(t, msg.DeadReplayed, refused[0].Reason.Code, "replayed already")
		_, refused, err = m.Replay(ctx, runstate.Replay{IDs: []int64{d.ID}, By: "ops", Force: true})
		require.NoError(t, err)
		require.Len(t, refused, 1)
		require.Equal(t, msg.DeadSlotActive, refused[0].Reason.Code, "forced, but the slot runs again already")

		// The replayed attempts run with the replay's params and succeed:
		// the run succeeds through its normal settle.
		for _, x := range replayed {
			_, err := s.PlaceAttempts(ctx, 1, 0, []store.Placement{{Token: x.ReplayToken.Int64, ExecutorID: ex.ID}})
			require.NoError(t, err)
		}
		push, err := s.UnackedFor(ctx, ex.ID, 10)
		require.NoError(t, err)
		require.Len(t, push, 2)
		for _, p := range push {
			require.Equal(t, `{"day":"tue"}`, p.Params, "the replay's params, not the run's")
		}
		finish(0, store.AttemptSucceeded, "")
		finish(1, store.AttemptSucceeded, "")
		r, err = s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunSucceeded, r.Status)
		require.Equal(t, 3, r.SlotsSucceeded)
		require.Zero(t, r.SlotsFailed)
		require.Len(t, dead(), 2, "a success writes no letter")

		_, refused, err = m.Replay(ctx, runstate.Replay{IDs: []int64{e.ID}, By: "ops", Force: true})
		require.NoError(t, err)
		require.Equal(t, msg.DeadSlotSucceeded, refused[0].Reason.Code)
		_, refused, err = m.Replay(ctx, runstate.Replay{IDs: []int64{987654}, By: "ops"})
		require.NoError(t, err)
		require.Equal(t, msg.DeadNotFound, refused[0].Reason.Code)
	})
}
