package scheduler

import (
	"context"
	"time"

	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// RetryFailed creates the next attempt of failed slots whose job allows
// more attempts (never of a permanent failure, nor while the job's circuit
// breaker is open: the store does not offer them), once their backoff
// (capped by the job's retry_backoff_max) has passed, and the delay the
// failed attempt asked for (sdk.RetryAfter, an HTTP Retry-After) when it
// is longer. A retry beyond the job's retry budget is not made: the slot
// fails for good (budgetSpent). The new attempts are placed by
// PlaceUnplaced, preferably on another executor.
func (s *Scheduler) RetryFailed(ctx context.Context, epoch int64) error {
	cands, err := s.store.RetryCandidates(ctx, 1000)
	if err != nil {
		return err
	}
	now := s.cfg.Clock.Now()
	budgets := map[int64]*store.RetryBudgetUse{} // job → its budget's use this round
	for _, c := range cands {
		delay := RetryDelay(c.Token, c.Failures+1, time.Duration(c.RetryBackoffMS)*time.Millisecond, jobrules.BackoffCap(c.RetryBackoffMax, s.cfg.RetryBackoffCap))
		if c.RetryAfterMS.Valid {
			delay = max(delay, min(time.Duration(c.RetryAfterMS.Int64)*time.Millisecond, protocol.MaxRetryAfter))
		}
		if c.FinishedAt.Valid && time.UnixMilli(c.FinishedAt.Int64).Add(delay).After(now) {
			continue
		}
		if c.RetryBudgetPercent > 0 {
			spent, err := s.budgetSpent(ctx, epoch, c, budgets, now)
			if err != nil {
				return err
			}
			if spent {
				continue
			}
		}
		tok, err := s.store.Retry(ctx, epoch, c)
		if err != nil {
			return err
		}
		if tok > 0 {
			if u := budgets[c.JobID]; u != nil {
				u.Retries++
			}
			s.count(func(st *Stats) { st.Retried++ })
			s.log.Info("retrying failed slot", "run_id", c.RunID, "slot", c.Slot, "attempt", c.Attempt+1, "old_token", c.Token, "new_token", tok, "after", delay.Round(time.Millisecond))
		}
	}
	return nil
}

// RetryDelay is the full-jitter backoff after the `attempt`-th failed attempt
// of a slot: uniform in [0, min(cap, base·2^(attempt-1))].
// The "random" fraction is derived from the failed token, so every replica
// and every scan computes the same delay for the same attempt.
func RetryDelay(token int64, attempt int, base, cap time.Duration) time.Duration {
	if base <= 0 {
		return 0
	}
	ceiling := base
	for i := 1; i < attempt && ceiling < cap; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, cap)
	// splitmix64 of the token: a well-mixed, deterministic fraction in [0,1).
	z := uint64(token) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	frac := float64(z>>11) / float64(1<<53)
	return time.Duration(frac * float64(ceiling))
}

// runsBeforeWindow is how long before a retry budget's window a run may
// have been scheduled for its attempts to count (RetryBudgetUse reads the
// job's runs by their scheduled time).
const runsBeforeWindow = 24 * time.Hour

// budgetSpent reports whether one more retry of c exceeds its job's retry
// budget (read once per job and round, in budgets, and counted on as the
// round retries); if so it ends c's slot with the reason (runstate
// DenyRetry: slot_dead, the run settles).
func (s *Scheduler) budgetSpent(ctx context.Context, epoch int64, c store.RetryCandidate, budgets map[int64]*store.RetryBudgetUse, now time.Time) (bool, error) {
	window := jobrules.BudgetWindow(c.RetryBudgetWindow)
	u := budgets[c.JobID]
	if u == nil {
		since := now.Add(-window).UnixMilli()
		use, err := s.store.RetryBudgetUse(ctx, c.JobID, since, now.Add(-window-runsBeforeWindow).UnixMilli())
		if err != nil {
			return false, err
		}
		u = &use
		budgets[c.JobID] = u
	}
	if jobrules.RetryBudgetAllows(c.RetryBudgetPercent, *u) {
		return false, nil
	}
	reason := msg.New(msg.AttemptBudgetSpent, "retries", u.Retries, "firsts", u.Firsts, "window", window.String(), "percent", c.RetryBudgetPercent,
		"error", c.Error)
	denied, err := s.runs.DenyRetry(ctx, epoch, c.Token, reason)
	if err != nil {
		return false, err
	}
	if denied {
		s.log.Warn("retry budget spent: slot not retried", "run_id", c.RunID, "slot", c.Slot, "token", c.Token, "retries", u.Retries, "first_attempts", u.Firsts, "percent", c.RetryBudgetPercent, "window", window)
	}
	return true, nil
}
