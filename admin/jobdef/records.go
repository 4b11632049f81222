package jobdef

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/schedule"
)

// The records policy of a job: how the handler's sdk/records Processor
// deduplicates and what it does with uncertain records, chosen by whoever
// defines the job. Empty values leave the choice to the handler's Config.
const (
	ScopeRun = "run" // each run handles each record once (the SDK's default)
	ScopeJob = "job" // once per job, across all its runs (up to the dedup horizon)

	UncertainRetry = "retry" // at least once: records left pending by a dead attempt are applied again
	UncertainSkip  = "skip"  // at most once: they are left pending, counted and alarmed

	MaxRecordAttempts = 100
	// MaxScopeBytes is the longest scope the dedup table holds
	// (dedup_record.scope), after placeholders are replaced.
	MaxScopeBytes = 128
	// MaxScopeTemplateBytes is the longest dedup_scope a job stores (the
	// column job.dedup_scope), before placeholders are replaced.
	MaxScopeTemplateBytes = 160
)

// scopePlaceholders are replaced by the run's scheduled time in the job's
// time zone: runs of one day (month, year) share a scope.
var scopePlaceholders = map[string]string{
	"{date}":  "2006-01-02",
	"{month}": "2006-01",
	"{year}":  "2006",
}

var (
	placeholderRE = regexp.MustCompile(`\{[^{}]*\}`)
	scopeCharsRE  = regexp.MustCompile(`^[A-Za-z0-9._:/=-]+$`)
)

// validateRecordsPolicy checks the records policy fields of s into errs.
func validateRecordsPolicy(s apitypes.JobDef, errs FieldErrors) {
	if err := checkDedupScope(s.DedupScope); err != nil {
		errs["dedup_scope"] = err.Error()
	}
	switch s.UncertainPolicy {
	case "", UncertainRetry, UncertainSkip:
	default:
		errs["uncertain_policy"] = fmt.Sprintf("%q: empty (the handler decides), %q (at least once) or %q (at most once, alarmed)", s.UncertainPolicy, UncertainRetry, UncertainSkip)
	}
	if s.RecordMaxAttempts < 0 || s.RecordMaxAttempts > MaxRecordAttempts {
		errs["record_max_attempts"] = fmt.Sprintf("between 0 (the handler decides) and %d", MaxRecordAttempts)
	}
}

// checkDedupScope validates a job's dedup scope: empty, "run", "job", or a
// name of letters, digits and . _ : / = - with the placeholders {date},
// {month} and {year}.
func checkDedupScope(scope string) error {
	switch scope {
	case "", ScopeRun, ScopeJob:
		return nil
	}
	const how = `empty or "run" (each run handles each record once), "job" (once per job), or a name such as "settle:{date}" ` +
		`(letters, digits and . _ : / = -; {date}, {month} and {year} become the run's scheduled time in the job's time zone)`
	if len(scope) > MaxScopeTemplateBytes {
		return fmt.Errorf("%d bytes: at most %d (and at most %d once its placeholders are replaced)", len(scope), MaxScopeTemplateBytes, MaxScopeBytes)
	}
	if strings.HasPrefix(scope, "run:") {
		return fmt.Errorf("%q starts with \"run:\", which the per-run scope uses: %s", scope, how)
	}
	for _, p := range placeholderRE.FindAllString(scope, -1) {
		if _, ok := scopePlaceholders[p]; !ok {
			return fmt.Errorf("%q: unknown placeholder %s: %s", scope, p, how)
		}
	}
	bare := placeholderRE.ReplaceAllString(scope, "x")
	if !scopeCharsRE.MatchString(bare) {
		return fmt.Errorf("%q: %s", scope, how)
	}
	// Every placeholder expands to a fixed width, so any instant tells the length.
	if n := len(ResolveDedupScope(scope, "UTC", 0)); n > MaxScopeBytes {
		return fmt.Errorf("%q becomes %d bytes with its placeholders replaced: at most %d", scope, n, MaxScopeBytes)
	}
	return nil
}

// ResolveDedupScope is the scope a run of a job with dedup scope scope
// uses: "" for a job that leaves it to the handler, "run", "job", or the name
// with its placeholders replaced by the run's scheduled time (Unix ms) in
// time zone zone (UTC when zone does not load).
func ResolveDedupScope(scope, zone string, scheduledAtMS int64) string {
	if !strings.Contains(scope, "{") {
		return scope
	}
	loc, err := schedule.ValidateZone(zone)
	if err != nil {
		loc = time.UTC // jobs are saved with a valid zone; a zone the machine lost reads as UTC
	}
	at := time.UnixMilli(scheduledAtMS).In(loc)
	return placeholderRE.ReplaceAllStringFunc(scope, func(p string) string {
		if layout, ok := scopePlaceholders[p]; ok {
			return at.Format(layout)
		}
		return p
	})
}
