package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// utc parses an RFC 3339 instant; tests always spell instants out in UTC.
func utc(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return v.UTC()
}

func utcs(t testing.TB, ss ...string) []time.Time {
	t.Helper()
	out := make([]time.Time, len(ss))
	for i, s := range ss {
		out[i] = utc(t, s)
	}
	return out
}

func mustParse(t testing.TB, spec Spec) *Schedule {
	t.Helper()
	s, err := Parse(spec)
	require.NoError(t, err, "spec %+v", spec)
	return s
}

// nextN returns the next n firings after `after`, formatted as RFC 3339 UTC.
func nextN(s *Schedule, after time.Time, n int) []string {
	out := make([]string, 0, n)
	for range n {
		after = s.Next(after)
		if after.IsZero() {
			break
		}
		out = append(out, after.Format(time.RFC3339))
	}
	return out
}

func formatAll(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, v := range ts {
		out[i] = v.UTC().Format(time.RFC3339)
	}
	return out
}
