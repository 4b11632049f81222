package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
)

// TestSampleUtilizationCountsOnlineExecutorsPerApp: one row per app that
// has executors (none for an app whose executors are all gone); capacity
// and executors count online executors; busy counts slots running or
// dispatched and not yet acknowledged, queued those acknowledged and not
// started — the dashboard's busy = active − queued.
func TestSampleUtilizationCountsOnlineExecutorsPerApp(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		n, err := s.SampleUtilization(ctx, 1000)
		require.NoError(t, err)
		require.Zero(t, n, "no executors, no rows")

		a1 := heartbeat(t, s, "a-1", 1, 4)
		heartbeat(t, s, "a-2", 2, 2)
		for _, in := range []store.ExecutorInfo{
			{InstanceID: "b-1", App: "b", Address: "http://127.0.0.1:3", Capacity: 3},
			{InstanceID: "c-1", App: "c", Address: "http://127.0.0.1:4", Capacity: 5},
		} {
			_, err := s.Heartbeat(ctx, in)
			require.NoError(t, err)
		}
		require.NoError(t, s.Deregister(ctx, "c-1"))

		jobID, err := s.CreateJob(ctx, newJob("a", "three", 0))
		require.NoError(t, err)
		run, atts := startRunAt(t, s, 1, jobID, 1, a1.ID, a1.ID, a1.ID)
		require.NotZero(t, run.ID)
		// Slot 0 runs, slot 1 waits in a1's queue, slot 2 is on its way.
		require.NoError(t, s.AckAttempts(ctx, a1.ID, []int64{atts[0].Token, atts[1].Token}))
		require.NoError(t, s.MarkStarted(ctx, a1.ID, []int64{atts[0].Token}))

		n, err = s.SampleUtilization(ctx, 60_000)
		require.NoError(t, err)
		require.Equal(t, int64(2), n, "apps a and b; c has only a gone executor")
		got := buckets(t, s, store.UtilizationFilter{FromMS: 0, ToMS: 120_000, WidthMS: 60_000})
		require.Equal(t, []store.UtilizationBucket{
			{App: "a", Start: 60_000, Executors: 2, Capacity: 6, Busy: 2, Queued: 1, Samples: 1},
			{App: "b", Start: 60_000, Executors: 1, Capacity: 3, Busy: 0, Queued: 0, Samples: 1},
		}, got)

		// Without an instant: the database clock.
		before, err := s.NowMS(ctx)
		require.NoError(t, err)
		n, err = s.SampleUtilization(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		after, err := s.NowMS(ctx)
		require.NoError(t, err)
		got = buckets(t, s, store.UtilizationFilter{FromMS: before, ToMS: after + 1, WidthMS: 1, Apps: []string{"b"}})
		require.Len(t, got, 1)
		require.Equal(t, "b", got[0].App)
		require.GreaterOrEqual(t, got[0].Start, before)
		require.LessOrEqual(t, got[0].Start, after)
	})
}

// TestUtilizationDownsamples: per app and epoch-aligned bucket, the largest
// busy and queued, the mean capacity and executors; [from, to) bounds the
// samples; an app list limits the apps (empty: none).
func TestUtilizationDownsamples(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		const m = int64(time.Minute / time.Millisecond)
		var samples []store.UtilizationSample
		// App a: four samples a minute apart, from 10:00; b: one.
		base := 600 * m
		for i, x := range []struct{ exec, capacity, busy, queued int }{{2, 8, 1, 0}, {2, 8, 7, 3}, {1, 4, 4, 9}, {2, 8, 2, 0}} {
			samples = append(samples, store.UtilizationSample{At: base + int64(i)*m, App: "a", Executors: x.exec, Capacity: x.capacity, Busy: x.busy, Queued: x.queued})
		}
		samples = append(samples, store.UtilizationSample{At: base + 30_000, App: "b", Executors: 1, Capacity: 2, Busy: 1})
		require.NoError(t, s.AddUtilizationSamples(ctx, samples))

		two := buckets(t, s, store.UtilizationFilter{FromMS: base, ToMS: base + 4*m, WidthMS: 2 * m})
		require.Equal(t, []store.UtilizationBucket{
			{App: "a", Start: base, Executors: 2, Capacity: 8, Busy: 7, Queued: 3, Samples: 2},
			{App: "a", Start: base + 2*m, Executors: 1.5, Capacity: 6, Busy: 4, Queued: 9, Samples: 2},
			{App: "b", Start: base, Executors: 1, Capacity: 2, Busy: 1, Queued: 0, Samples: 1},
		}, two)

		// to is exclusive, from inclusive; buckets stay aligned on the epoch.
		part := buckets(t, s, store.UtilizationFilter{FromMS: base + m, ToMS: base + 3*m, WidthMS: 2 * m, Apps: []string{"a"}})
		require.Equal(t, []store.UtilizationBucket{
			{App: "a", Start: base, Executors: 2, Capacity: 8, Busy: 7, Queued: 3, Samples: 1},
			{App: "a", Start: base + 2*m, Executors: 1, Capacity: 4, Busy: 4, Queued: 9, Samples: 1},
		}, part)

		none, err := s.Utilization(ctx, store.UtilizationFilter{FromMS: base, ToMS: base + 4*m, WidthMS: m, Apps: []string{}})
		require.NoError(t, err)
		require.Empty(t, none)
		other := buckets(t, s, store.UtilizationFilter{FromMS: base, ToMS: base + 4*m, WidthMS: m, Apps: []string{"nope"}})
		require.Empty(t, other)

		_, err = s.Utilization(ctx, store.UtilizationFilter{FromMS: base, ToMS: base, WidthMS: m})
		require.Error(t, err)
		_, err = s.Utilization(ctx, store.UtilizationFilter{FromMS: base, ToMS: base + m})
		require.Error(t, err)
	})
}

func buckets(t *testing.T, s *store.Store, f store.UtilizationFilter) []store.UtilizationBucket {
	t.Helper()
	out, err := s.Utilization(context.Background(), f)
	require.NoError(t, err)
	return out
}
