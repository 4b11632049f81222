package jobdef

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
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

// scopeCharsRE matches the characters of a dedup scope, its placeholders
// (jobrules.ScopeBraces) left aside.
var scopeCharsRE = regexp.MustCompile(`^[A-Za-z0-9._:/=-]+$`)

// validateRecordsPolicy checks the records policy fields of s into errs.
func validateRecordsPolicy(s apitypes.JobDef, errs FieldMsgs) {
	if err := checkDedupScope(s.DedupScope); err != nil {
		errs["dedup_scope"] = msg.Of(err)
	}
	switch s.UncertainPolicy {
	case "", UncertainRetry, UncertainSkip:
	default:
		errs["uncertain_policy"] = msg.New(msg.UncertainPolicyBad, "value", strconv.Quote(s.UncertainPolicy))
	}
	if s.RecordMaxAttempts < 0 || s.RecordMaxAttempts > MaxRecordAttempts {
		errs["record_max_attempts"] = msg.New(msg.RecordMaxAttempts, "max", MaxRecordAttempts)
	}
}

// checkDedupScope validates a job's dedup scope: empty, "run", "job", or a
// name of letters, digits and . _ : / = - with the placeholders {date},
// {month} and {year}. An error is a msg.Msg.
func checkDedupScope(scope string) error {
	switch scope {
	case "", ScopeRun, ScopeJob:
		return nil
	}
	how := msg.New(msg.DedupScopeHow)
	quoted := strconv.Quote(scope)
	if len(scope) > MaxScopeTemplateBytes {
		return msg.New(msg.DedupScopeTooLong, "bytes", len(scope), "max", MaxScopeTemplateBytes, "max_resolved", MaxScopeBytes)
	}
	if strings.HasPrefix(scope, "run:") {
		return msg.New(msg.DedupScopeRunPrefix, "value", quoted, "how", how)
	}
	braced, bare := jobrules.ScopeBraces(scope)
	for _, p := range braced {
		if !slices.Contains(jobrules.ScopePlaceholders(), p) {
			return msg.New(msg.DedupScopePlaceholder, "value", quoted, "placeholder", p, "how", how)
		}
	}
	if !scopeCharsRE.MatchString(bare) {
		return msg.New(msg.DedupScopeChars, "value", quoted, "how", how)
	}
	// Every placeholder expands to a fixed width, so any instant tells the length.
	if n := len(jobrules.ResolveDedupScope(scope, "UTC", 0)); n > MaxScopeBytes {
		return msg.New(msg.DedupScopeResolved, "value", quoted, "bytes", n, "max", MaxScopeBytes)
	}
	return nil
}
