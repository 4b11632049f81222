package jobdef

import (
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
)

// Bounds of the retry budget and circuit breaker settings
// (docs/failures.md, "Retry budgets and circuit breakers").
const (
	MaxBreakerThreshold   = 1000
	MaxRetryBudgetPercent = 1000
)

// validateBreaker checks a job's retry budget and circuit breaker into
// errs: retry_backoff_max a duration from 1ms to 24h or ""; the budget's
// percentage 0..MaxRetryBudgetPercent and its window from 1m to 24h, only
// with a percentage; the breaker's threshold 0..MaxBreakerThreshold and
// its cool-down from 1s to 24h, only with a threshold. d has its defaults.
func validateBreaker(d apitypes.JobDef, errs FieldMsgs) {
	checkDuration := func(field, value string, lo, hi time.Duration, example string) {
		if value == "" {
			return
		}
		v, err := time.ParseDuration(value)
		if err != nil || v < lo || v > hi {
			errs[field] = msg.New(msg.BreakerDuration, "value", strconv.Quote(value), "min", shortDuration(lo), "max", shortDuration(hi), "example", example)
		}
	}
	// a setting of a feature that count (a percentage, a threshold) turns on
	setting := func(field, value, countField string, count, maxCount int, lo time.Duration, example string) {
		if count < 0 || count > maxCount {
			errs[countField] = msg.New(msg.ValueBetween, "min", 0, "max", maxCount)
		}
		if count <= 0 && value != "" {
			errs[field] = msg.New(msg.BreakerOnlyWith, "field", countField)
			return
		}
		checkDuration(field, value, lo, jobrules.MaxBreakerDuration, example)
	}
	checkDuration("retry_backoff_max", d.RetryBackoffMax, jobrules.MinBackoffMax, jobrules.MaxBreakerDuration, "5m")
	setting("retry_budget_window", d.RetryBudgetWindow, "retry_budget_percent", d.RetryBudgetPercent, MaxRetryBudgetPercent, jobrules.MinBudgetWindow, "1h")
	setting("breaker_cooldown", d.BreakerCooldown, "breaker_threshold", d.BreakerThreshold, MaxBreakerThreshold, jobrules.MinBreakerCooldown, "5m")
}

// shortDuration is d as people write it: 24h, 1m, 1ms (not 24h0m0s).
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
