package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseJitterWindow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "", want: 0},
		{in: "0", want: 0},
		{in: "0s", want: 0},
		{in: "10m", want: 10 * time.Minute},
		{in: "1h30m", want: 90 * time.Minute},
		{in: "12h", want: 12 * time.Hour},
		{in: "1500us", want: time.Millisecond}, // millisecond precision
		{in: "12h0m1s", bad: true},
		{in: "-1m", bad: true},
		{in: "ten minutes", bad: true},
		{in: "10", bad: true},
	} {
		got, err := ParseJitterWindow(tc.in)
		if tc.bad {
			require.ErrorIs(t, err, ErrInvalid, tc.in)
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, "jitter window", ve.Name)
			require.Contains(t, ve.Msg, "12h", "the message says the limit")
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

// TestJitterOffset: the offset depends only on (job key, scheduled time),
// lies in [0, window), differs between jobs and firings, and spreads evenly
// over the window.
func TestJitterOffset(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
	w := 10 * time.Minute
	require.Equal(t, JitterOffset("billing/settle", at, w), JitterOffset("billing/settle", at.In(time.FixedZone("x", 3600)), w),
		"the same instant gives the same offset, whatever its location")
	require.Zero(t, JitterOffset("billing/settle", at, 0))
	require.Zero(t, JitterOffset("billing/settle", at, time.Microsecond))
	require.Equal(t, time.Duration(0), JitterOffset("billing/settle", at, time.Millisecond), "a 1ms window has one offset")

	// Uniform: 100,000 hourly firings of one job, and one firing of 100,000
	// jobs, in 20 buckets of the window; each bucket holds its share within
	// 5 % (the expected deviation of a bucket is about 1.4 %).
	const n, buckets = 100_000, 20
	check := func(name string, offset func(i int) time.Duration) {
		var count [buckets]int
		seen := map[time.Duration]bool{}
		for i := range n {
			o := offset(i)
			require.GreaterOrEqual(t, o, time.Duration(0), name)
			require.Less(t, o, w, name)
			require.Zero(t, o%time.Millisecond, name)
			count[int(o*buckets/w)]++
			seen[o] = true
		}
		for b, c := range count {
			require.InDelta(t, n/buckets, c, 0.05*n/buckets, "%s: bucket %d of %d", name, b, buckets)
		}
		// 100,000 draws from 600,000 values: about 85,000 distinct expected.
		require.Greater(t, len(seen), 80_000, "%s: offsets are spread, not repeated", name)
		var sum float64
		for i := range 1000 {
			sum += float64(offset(i))
		}
		require.InDelta(t, float64(w)/2, sum/1000, float64(w)*0.05, "%s: mean offset about half the window", name)
	}
	check("firings of one job", func(i int) time.Duration {
		return JitterOffset("billing/settle", at.Add(time.Duration(i)*time.Hour), w)
	})
	check("one firing of many jobs", func(i int) time.Duration {
		return JitterOffset("app/job-"+itoa(i), at, w)
	})
	first := JitterOffset("billing/settle", at, w)
	require.NotEqual(t, first, JitterOffset("billing/settle", at.Add(time.Hour), w))
	require.NotEqual(t, first, JitterOffset("billing/settle2", at, w))
	// The function must not change between versions: a leader of the next
	// version replaying this firing must pick the offset this one picked.
	require.Equal(t, 6*time.Minute+6198*time.Millisecond, first, "the offset of billing/settle at %s changed", at.Format(time.RFC3339))
}

func itoa(i int) string { return time.Duration(i).String() }
