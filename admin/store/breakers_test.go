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

// TestBreakerState: the circuit breaker's rows on every dialect — failures
// are counted by results (retryable, timeout and lost; a permanent one and
// a job without a breaker count nothing) and lost executors, a success
// starts the count again (a closed breaker with none is no row); opening,
// probing and closing are fenced by the epoch and guarded by the state
// read; closing releases the held runs and resolves breaker_open; a retry
// the budget denies makes the slot final and settles the run.
func TestBreakerState(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		ex := heartbeat(t, s, "ex", 1, 8)
		j := newJob("a", "bank", 0)
		j.RetryMax, j.BreakerThreshold, j.BreakerCooldown = 5, 3, "1m"
		j.RetryBudgetPercent, j.RetryBudgetWindow, j.RetryBackoffMax = 50, "10m", "5m"
		jobID, err := s.CreateJob(ctx, j)
		require.NoError(t, err)
		got, err := s.Job(ctx, jobID)
		require.NoError(t, err)
		require.Equal(t, j.JobBreaker, got.JobBreaker, "the job keeps its settings")
		other := newJob("a", "nobreaker", 0)
		otherID, err := s.CreateJob(ctx, other)
		require.NoError(t, err)

		m := runstate.New(s)
		finish := func(a store.Attempt, status, class, text string) {
			t.Helper()
			ok, err := m.FinishAttempt(ctx, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: a.Token, Status: status, ErrorClass: class, Error: text, FinishedAt: 10}, ExecutorID: ex.ID})
			require.NoError(t, err)
			require.True(t, ok)
		}
		breaker := func() (store.BreakerState, bool) {
			t.Helper()
			b, ok, err := s.Breaker(ctx, jobID)
			require.NoError(t, err)
			return b, ok
		}
		_, atts := startRunAt(t, s, 1, jobID, 1, ex.ID, ex.ID, ex.ID, ex.ID)
		_, others := startRunAt(t, s, 1, otherID, 1, ex.ID)
		finish(others[0], store.AttemptFailed, protocol.ClassRetryable, "down")
		finish(atts[0], store.AttemptFailed, protocol.ClassRetryable, "bank down")
		finish(atts[1], store.AttemptFailed, protocol.ClassPermanent, "account closed")
		b, ok := breaker()
		require.True(t, ok)
		require.Equal(t, store.BreakerClosed, b.State)
		require.Equal(t, 1, b.Failures, "the permanent failure does not count")
		require.Equal(t, "retryable: bank down", b.LastError)
		require.Equal(t, 3, b.BreakerThreshold)
		require.Equal(t, "bank", b.JobName)
		finish(atts[2], store.AttemptSucceeded, "", "")
		_, ok = breaker()
		require.False(t, ok, "a success forgets the count of a closed breaker")
		finish(atts[3], store.AttemptFailed, protocol.ClassTimeout, "slow")
		_, err = s.Reassign(ctx, 1, others[0], ex.ID, 0) // a failed attempt is not active: nothing moves, nothing counted
		require.NoError(t, err)
		_, atts2 := startRunAt(t, s, 1, jobID, 2, ex.ID)
		_, err = s.Reassign(ctx, 1, atts2[0], ex.ID, 0)
		require.NoError(t, err)
		_, atts3 := startRunAt(t, s, 1, jobID, 3, 0) // its slot waits unplaced
		b, _ = breaker()
		require.Equal(t, 2, b.Failures, "a timeout and a lost attempt")
		all, err := s.Breakers(ctx)
		require.NoError(t, err)
		require.Len(t, all, 1, "only jobs with a breaker have a row")

		// Open (fenced), from the state read; a stale leader changes nothing.
		reason := msg.New(msg.BreakerFailures, "failures", 3, "error", "x")
		alarm := store.Alarm{Kind: store.AlarmBreakerOpen, Severity: "critical", App: "a", JobID: sql.NullInt64{Int64: jobID, Valid: true}, DedupKey: "breaker_open:t", Msg: reason}
		ok, err = s.OpenBreaker(ctx, 1, b, 1000, 61_000, reason, &alarm)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = s.OpenBreaker(ctx, 1, b, 1000, 61_000, reason, nil)
		require.NoError(t, err)
		require.False(t, ok, "guarded by the state read (closed)")
		b, _ = breaker()
		require.Equal(t, store.BreakerOpen, b.State)
		require.Equal(t, int64(1000), b.OpenedAt.Int64)
		require.Equal(t, int64(61_000), b.ProbeAt.Int64)
		require.Equal(t, reason.String(), b.Reason.String())
		require.Equal(t, int64(1), b.Epoch)

		// Held work: retries and unplaced attempts of the job are left out.
		cands, err := s.RetryCandidates(ctx, 10)
		require.NoError(t, err)
		for _, c := range cands {
			require.NotEqual(t, jobID, c.JobID, "the breaker holds the job's retries")
		}
		held, ok, err := s.HeldRetry(ctx, jobID)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, atts[0].Token, held.Token, "the oldest held retry")
		unplaced, err := s.UnplacedAttempts(ctx, 0, 100)
		require.NoError(t, err)
		for _, u := range unplaced {
			require.NotEqual(t, jobID, u.JobID)
		}
		tok, err := s.HeldUnplaced(ctx, jobID)
		require.NoError(t, err)
		require.Equal(t, atts3[0].Token, tok, "the unplaced slot waits")

		// Probe, fenced: a newer leader's epoch refuses the old one.
		_, err = s.ClaimEpoch(ctx, 2, "other")
		require.NoError(t, err)
		_, err = s.SetProbe(ctx, 1, jobID, tok)
		require.ErrorIs(t, err, store.ErrStaleEpoch)
		ok, err = s.SetProbe(ctx, 2, jobID, tok)
		require.NoError(t, err)
		require.True(t, ok)
		unplaced, err = s.UnplacedAttempts(ctx, 0, 100)
		require.NoError(t, err)
		var probe []int64
		for _, u := range unplaced {
			if u.JobID == jobID {
				probe = append(probe, u.Token)
			}
		}
		require.Equal(t, []int64{tok}, probe, "only the probe is placed")
		o, found, err := s.ProbeOutcome(ctx, tok)
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, store.AttemptAssigned, o.Status)

		// A held pending run is released when the breaker closes.
		run, _, err := s.InsertRun(ctx, 2, store.NewRun{JobID: jobID, ScheduledAt: 5, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 1})
		require.NoError(t, err)
		require.NoError(t, s.HoldPending(ctx, 1_000_000, msg.New(msg.RunWaiting, "cause", reason), []int64{run.ID}))
		hr, ok, err := s.HeldRun(ctx, jobID, 10)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, run.ID, hr.ID)
		closedAlarm := &store.Alarm{Kind: store.AlarmBreakerClosed, Severity: "info", RaisedBy: "alice", App: "app",
			JobID: sql.NullInt64{Int64: jobID, Valid: true}, DedupKey: "breaker_closed:test", Msg: msg.New(msg.AlarmBreakerClosed, "job", "bank", "how", "x")}
		ok, err = s.CloseBreaker(ctx, 2, jobID, store.BreakerOpen, "me", msg.New(msg.AlarmResolvedBreakerClosed, "how", "x"), closedAlarm)
		require.NoError(t, err)
		require.False(t, ok, "guarded: it is probing")
		ok, err = s.CloseBreaker(ctx, 0, jobID, "", "alice", msg.New(msg.AlarmResolvedBreakerClosed, "how", msg.New(msg.BreakerClosedBy, "user", "alice")), closedAlarm)
		require.NoError(t, err)
		require.True(t, ok, "by hand, from any state")
		_, ok = breaker()
		require.False(t, ok)
		page, err := s.PendingPage(ctx, 10, store.PendingCursor{}, 100)
		require.NoError(t, err)
		require.Len(t, page, 1, "the held run starts at the next round")
		require.Equal(t, run.ID, page[0].ID)
		alarms, err := s.Alarms(ctx, 0, 100)
		require.NoError(t, err)
		resolved, closedInfo := 0, 0
		for _, a := range alarms {
			switch a.Kind {
			case store.AlarmBreakerOpen:
				require.True(t, a.ResolvedAt.Valid)
				require.Equal(t, "alice", a.ResolvedBy)
				resolved++
			case store.AlarmBreakerClosed:
				require.Equal(t, "info", a.Severity)
				require.True(t, a.ResolvedAt.Valid, "an info alarm is resolved when raised")
				closedInfo++
			}
		}
		require.Equal(t, 1, resolved)
		require.Equal(t, 1, closedInfo, "breaker_closed raised once: only by the close that closed it")

		// The retry budget: first attempts and retries over the window.
		use, err := s.RetryBudgetUse(ctx, jobID, 0, 0)
		require.NoError(t, err)
		require.Equal(t, 5, use.Firsts, "four slots and one")
		require.Zero(t, use.Retries)
		cands, err = s.RetryCandidates(ctx, 10)
		require.NoError(t, err)
		var c store.RetryCandidate
		for _, x := range cands {
			if x.JobID == jobID && x.Token == atts[0].Token {
				c = x
			}
		}
		require.Equal(t, atts[0].Token, c.Token, "closed again: the retry is offered")
		require.Equal(t, "bank down", c.Error)
		require.Equal(t, 50, c.RetryBudgetPercent)
		require.Equal(t, "5m", c.RetryBackoffMax)
		_, err = s.Retry(ctx, 2, c)
		require.NoError(t, err)
		use, err = s.RetryBudgetUse(ctx, jobID, 0, 0)
		require.NoError(t, err)
		require.Equal(t, 1, use.Retries)

		// A denied retry: the slot is final, the run settles.
		ok, err = m.DenyRetry(ctx, 2, atts[3].Token, msg.New(msg.AttemptBudgetSpent, "retries", 1, "firsts", 5, "window", "10m", "percent", 20, "error", "slow"))
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = m.DenyRetry(ctx, 2, atts[3].Token, msg.New(msg.Text, "text", "again"))
		require.NoError(t, err)
		require.False(t, ok, "once")
		_, err = m.DenyRetry(ctx, 1, atts[3].Token, msg.New(msg.Text, "text", "stale"))
		require.ErrorIs(t, err, store.ErrStaleEpoch)
		a := currentAttempt(t, s, atts[3].RunID, 3)
		require.Equal(t, msg.AttemptBudgetSpent, a.ErrorMsg.Code)
		cands, err = s.RetryCandidates(ctx, 10)
		require.NoError(t, err)
		for _, x := range cands {
			require.NotEqual(t, atts[3].Token, x.Token, "a denied retry is not offered")
		}
		alarms, err = s.Alarms(ctx, 0, 100)
		require.NoError(t, err)
		dead := 0
		for _, al := range alarms {
			if al.Kind == store.AlarmSlotDead && al.Msg.Code == msg.AlarmSlotDeadBudget {
				dead++
			}
		}
		require.Equal(t, 1, dead)
	})
}
