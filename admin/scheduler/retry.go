package scheduler

import (
	"context"
	"time"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// RetryFailed creates the next attempt of failed slots whose job allows
// more attempts (never of a permanent failure: the store does not offer
// them), once their backoff has passed, and the delay the failed attempt
// asked for (sdk.RetryAfter, an HTTP Retry-After) when it is longer. The
// new attempts are placed by PlaceUnplaced, preferably on another executor.
func (s *Scheduler) RetryFailed(ctx context.Context, epoch int64) error {
	cands, err := s.store.RetryCandidates(ctx, 1000)
	if err != nil {
		return err
	}
	now := s.cfg.Clock.Now()
	for _, c := range cands {
		delay := RetryDelay(c.Token, c.Failures+1, time.Duration(c.RetryBackoffMS)*time.Millisecond, s.cfg.RetryBackoffCap)
		if c.RetryAfterMS.Valid {
			delay = max(delay, min(time.Duration(c.RetryAfterMS.Int64)*time.Millisecond, protocol.MaxRetryAfter))
		}
		if c.FinishedAt.Valid && time.UnixMilli(c.FinishedAt.Int64).Add(delay).After(now) {
			continue
		}
		tok, err := s.store.Retry(ctx, epoch, c)
		if err != nil {
			return err
		}
		if tok > 0 {
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
