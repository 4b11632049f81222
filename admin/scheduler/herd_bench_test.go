package scheduler_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store/storetest"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

const herdJobs = 100_000

// BenchmarkHerdCreate measures run *creation* only: 100,000 jobs due at
// the same second (no H spreading), the leader loop in real time against
// MariaDB with a fake pusher — no executor, no dispatch, no results. Its
// lag is the run's creation (database clock) minus its scheduled time, 0
// when the run was created ahead by the pre-read window. It says nothing
// about when slots start or runs settle: that is BenchmarkHerdE2E
// (admin/e2e), with real admin and executor processes. Side by side: the
// adaptive window (default: 5 s, widened up to 30 s for a herd), a fixed
// 5 s window (XXL-JOB's pre-read), and none.
func BenchmarkHerdCreate(b *testing.B) {
	for _, tc := range []struct {
		name             string
		preRead, maxRead time.Duration
	}{
		{"adaptive-5s-to-30s", 5 * time.Second, 30 * time.Second},
		{"fixed-5s", 5 * time.Second, 5 * time.Second},
		{"none", time.Millisecond, time.Millisecond},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				p50, p99, maxLag := herdOnce(b, tc.preRead, tc.maxRead)
				b.ReportMetric(p50.Seconds()*1000, "p50-lag-ms")
				b.ReportMetric(p99.Seconds()*1000, "p99-lag-ms")
				b.ReportMetric(maxLag.Seconds()*1000, "max-lag-ms")
			}
		})
	}
}

func herdOnce(b *testing.B, preRead, maxRead time.Duration) (p50, p99, maxLag time.Duration) {
	b.StopTimer()
	ctx := context.Background()
	st := storetest.Open(b, sqlfiles.MySQL)
	now, err := st.Now(ctx)
	require.NoError(b, err)
	// Due far enough ahead that seeding finishes and the window opens later.
	due := now.Add(40 * time.Second).Truncate(time.Second)
	seedDueJobs(b, st, herdJobs, due)
	_, err = st.DB().Exec(`UPDATE job SET cron_expr = '0 * * * *'`)
	require.NoError(b, err)
	s, err := scheduler.New(scheduler.Config{ID: "herd", PreRead: preRead, MaxPreRead: maxRead, BatchSize: 2000}, st, &fakePusher{})
	require.NoError(b, err)
	leadCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	b.StartTimer()
	go func() { s.Lead(leadCtx, 1); close(done) }()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var n int
		require.NoError(b, st.DB().Get(&n, `SELECT COUNT(*) FROM job_run`))
		if n >= herdJobs {
			break
		}
		require.True(b, time.Now().Before(deadline), "herd not fired within 3 minutes: %d runs", n)
		t := time.NewTimer(200 * time.Millisecond) // polling the database, not synchronising
		<-t.C
	}
	stop()
	<-done
	b.StopTimer()
	var lags []int64
	require.NoError(b, st.DB().Select(&lags, `SELECT GREATEST(created_at - scheduled_at, 0) FROM job_run`))
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	b.StartTimer()
	at := func(q float64) time.Duration {
		return time.Duration(lags[int(q*float64(len(lags)-1))]) * time.Millisecond
	}
	return at(0.50), at(0.99), at(1)
}
