package schedule

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// 10,000 jobs written as "H * * * *" must spread evenly over the hour.
func TestHSpreadsMinutes(t *testing.T) {
	t.Parallel()
	const jobs = 10000
	var buckets [60]int
	for i := range jobs {
		s := mustParse(t, Spec{Expr: "H * * * *", JobKey: fmt.Sprintf("app-%d/job-%d", i%37, i)})
		require.Equal(t, 1, bits.OnesCount64(s.minute))
		buckets[bits.TrailingZeros64(s.minute)]++
	}
	maxBucket, minBucket := 0, jobs
	for _, n := range buckets {
		maxBucket, minBucket = max(maxBucket, n), min(minBucket, n)
	}
	mean := float64(jobs) / 60
	ratio := float64(maxBucket) / mean
	t.Logf("H spread over 60 minutes for %d jobs: max bucket %d, min bucket %d, mean %.1f, max/mean %.3f", jobs, maxBucket, minBucket, mean, ratio)
	require.Less(t, ratio, 1.35)
	require.Greater(t, minBucket, 0)
}

func TestHForms(t *testing.T) {
	t.Parallel()
	for i := range 500 {
		key := "tenant/job-" + strconv.Itoa(i)

		// H/15 in minutes: offset o in [0,15), then o, o+15, o+30, o+45.
		s := mustParse(t, Spec{Expr: "H/15 * * * *", JobKey: key})
		o := bits.TrailingZeros64(s.minute)
		require.Less(t, o, 15)
		require.Equal(t, uint64(1)<<o|uint64(1)<<(o+15)|uint64(1)<<(o+30)|uint64(1)<<(o+45), s.minute, key)

		// H(10-20)/4: offset in [0,4) from 10, up to 20.
		s = mustParse(t, Spec{Expr: "H(10-20)/4 * * * *", JobKey: key})
		first := bits.TrailingZeros64(s.minute)
		require.GreaterOrEqual(t, first, 10)
		require.Less(t, first, 14)
		for v := 0; v < 60; v++ {
			want := v >= first && v <= 20 && (v-first)%4 == 0
			require.Equal(t, want, s.minute&(1<<v) != 0, "%s minute %d in %s", key, v, s.Resolved())
		}

		// H(a-b) stays inside the range; day-of-month H stays within 1-28;
		// day-of-week H within 0-6; month H within 1-12.
		s = mustParse(t, Spec{Expr: "H(20-40) H(9-17) H * H", JobKey: key})
		m := bits.TrailingZeros64(s.minute)
		h := bits.TrailingZeros64(s.hour)
		d := bits.TrailingZeros64(s.dom)
		w := bits.TrailingZeros64(s.dow)
		require.True(t, m >= 20 && m <= 40, "minute %d", m)
		require.True(t, h >= 9 && h <= 17, "hour %d", h)
		require.True(t, d >= 1 && d <= 28, "day %d", d)
		require.True(t, w >= 0 && w <= 6, "weekday %d", w)
		s = mustParse(t, Spec{Expr: "0 0 H/7 H *", JobKey: key})
		require.LessOrEqual(t, 64-bits.LeadingZeros64(s.dom)-1, 28)
		mo := bits.TrailingZeros64(s.month)
		require.True(t, mo >= 1 && mo <= 12, "month %d", mo)

		// The minute of a job is the same in 5- and 6-field expressions, and
		// the same on every parse.
		five := mustParse(t, Spec{Expr: "H H * * *", JobKey: key})
		six := mustParse(t, Spec{Expr: "H H H * * *", JobKey: key})
		require.Equal(t, five.minute, six.minute)
		require.Equal(t, five.hour, six.hour)
		require.Equal(t, five.Resolved(), mustParse(t, Spec{Expr: "H H * * *", JobKey: key}).Resolved())
	}
}

func TestHResolvedIsPlainCron(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{"H * * * *", "H/15 H(2-5) * * *", "H H H(1-7)/2 * H(1-5)", "H(0-29),H(30-59) * * * *", "H H * H/3 *"} {
		s := mustParse(t, Spec{Expr: expr, JobKey: "x/y"})
		require.NotContains(t, s.Resolved(), "H")
		again := mustParse(t, Spec{Expr: s.Resolved()})
		require.Equal(t, s.minute, again.minute)
		require.Equal(t, s.hour, again.hour)
		require.Equal(t, s.dom, again.dom)
		require.Equal(t, s.month, again.month)
		require.Equal(t, s.dow, again.dow)
	}
	// The same hash drives every H of one field, so two halves of the hour
	// are exactly 30 minutes apart.
	s := mustParse(t, Spec{Expr: "H(0-29),H(30-59) * * * *", JobKey: "x/y"})
	parts := strings.Split(strings.Fields(s.Resolved())[0], ",")
	a, _ := strconv.Atoi(parts[0])
	b, _ := strconv.Atoi(parts[1])
	require.Equal(t, 30, b-a)
}
