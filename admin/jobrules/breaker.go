package jobrules

import (
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/store"
)

// Bounds of a job's retry budget and circuit breaker durations
// (admin/jobdef validates them; docs/failures.md).
const (
	MinBackoffMax      = time.Millisecond
	MinBudgetWindow    = time.Minute
	MinBreakerCooldown = time.Second
	MaxBreakerDuration = 24 * time.Hour
)

// durationOr is value parsed, def when it is empty or does not parse (a
// saved job's were validated).
func durationOr(value string, def time.Duration) time.Duration {
	if value == "" {
		return def
	}
	d, err := time.ParseDuration(value)
	if err != nil || d <= 0 {
		return def
	}
	return d
}

// BackoffCap is what caps a job's full-jitter backoff: its
// retry_backoff_max, else the admin's cap (--retry-backoff-cap).
func BackoffCap(retryBackoffMax string, adminCap time.Duration) time.Duration {
	return durationOr(retryBackoffMax, adminCap)
}

// BreakerCooldown is how long a job's breaker stays open before its probe
// (breaker_cooldown, default apitypes.DefaultBreakerCooldown).
func BreakerCooldown(j store.BreakerState) time.Duration {
	def, _ := time.ParseDuration(apitypes.DefaultBreakerCooldown)
	return durationOr(j.BreakerCooldown, def)
}

// BudgetWindow is the window a job's retry budget counts over
// (retry_budget_window, default apitypes.DefaultRetryBudgetWindow).
func BudgetWindow(window string) time.Duration {
	def, _ := time.ParseDuration(apitypes.DefaultRetryBudgetWindow)
	return durationOr(window, def)
}

// RetryBudgetAllows reports whether one more retry keeps a job within its
// budget: retries at most percent % of its first attempts over the window
// (percent 0: no budget, always).
func RetryBudgetAllows(percent int, use store.RetryBudgetUse) bool {
	if percent <= 0 {
		return true
	}
	return int64(use.Retries+1)*100 <= int64(percent)*int64(use.Firsts)
}

// BreakerTrips reports whether a closed breaker with failures counted
// opens (threshold 0: no breaker).
func BreakerTrips(threshold, failures int) bool {
	return threshold > 0 && failures >= threshold
}
