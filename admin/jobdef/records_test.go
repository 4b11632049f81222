package jobdef

import (
	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobrules"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRecordsPolicyValidation(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	base := apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "n", Handler: "h", Cron: "0 3 * * *"}}

	for _, scope := range []string{"", "run", "job", "settle:{date}", "month/{month}", "y={year}.v2", "batch-7"} {
		s := base
		s.DedupScope = scope
		v, err := Validate(s, now)
		require.NoError(t, err, scope)
		require.Equal(t, scope, v.Job.DedupScope, "stored as written: resolved per run")
	}
	for scope, why := range map[string]string{
		"run:5":                            `"run:"`,
		"a b":                              "letters, digits",
		"settle:{day}":                     "unknown placeholder {day}",
		"x{date":                           "letters, digits",
		strings.Repeat("d", 129):           "at most 128",
		strings.Repeat("{date}", 12) + "x": "becomes 121", // 12 × 10 bytes + 1: fits
	} {
		s := base
		s.DedupScope = scope
		_, err := Validate(s, now)
		if strings.HasPrefix(why, "becomes") {
			require.NoError(t, err, scope)
			continue
		}
		var fe FieldErrors
		require.ErrorAs(t, err, &fe, scope)
		require.Contains(t, fe["dedup_scope"], why, scope)
	}
	long := base
	long.DedupScope = strings.Repeat("{date}", 13) // 130 bytes once replaced
	_, err := Validate(long, now)
	require.ErrorContains(t, err, "becomes 130 bytes")

	for _, u := range []string{"", "retry", "skip"} {
		s := base
		s.UncertainPolicy = u
		v, err := Validate(s, now)
		require.NoError(t, err, u)
		require.Equal(t, u, v.Job.UncertainPolicy)
	}
	bad := base
	bad.UncertainPolicy = "maybe"
	_, err = Validate(bad, now)
	require.ErrorContains(t, err, "uncertain_policy")

	for n, ok := range map[int]bool{0: true, 1: true, 100: true, -1: false, 101: false} {
		s := base
		s.RecordMaxAttempts = n
		v, err := Validate(s, now)
		if ok {
			require.NoError(t, err, n)
			require.Equal(t, n, v.Job.RecordMaxAttempts)
		} else {
			require.ErrorContains(t, err, "record_max_attempts", n)
		}
	}
}

func FuzzDedupScope(f *testing.F) {
	for _, s := range []string{"", "run", "job", "settle:{date}", "{month}{year}", "run:1", "{", "}{", "{{date}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, scope string) {
		if checkDedupScope(scope) != nil {
			return
		}
		require.LessOrEqual(t, len(scope), MaxScopeTemplateBytes, "fits job.dedup_scope")
		// A valid scope resolves, for any instant and zone, to at most
		// MaxScopeBytes bytes, never to the per-run prefix, and with no
		// placeholder left.
		for _, zone := range []string{"UTC", "Pacific/Kiritimati", "America/Adak"} {
			for _, at := range []int64{0, 1798675200000, -62135596800000} {
				got := jobrules.ResolveDedupScope(scope, zone, at)
				require.LessOrEqual(t, len(got), MaxScopeBytes, scope)
				require.False(t, strings.HasPrefix(got, "run:"), scope)
				for _, p := range jobrules.ScopePlaceholders() {
					require.NotContains(t, got, p, scope)
				}
			}
		}
	})
}
