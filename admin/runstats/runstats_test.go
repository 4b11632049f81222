package runstats_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/internal/loops"
	"github.com/shardjob/shardjob/admin/runstats"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// base is the first minute of the tests' history.
var base = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// at is base + d in Unix ms.
func at(d time.Duration) int64 { return base.Add(d).UnixMilli() }

// run is a run as a test writes it: nil instants are NULL.
type run struct {
	app                string
	trigger            string
	status             string
	scheduled          int64
	started, finished  *int64
	firstSlotStartedAt *int64
}

func ptr(v int64) *int64 { return &v }

func null(p *int64) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *p, Valid: true}
}

// insert writes r (job ids distinct per run) and, if its first slot
// started, that attempt and a later one of another slot; it returns the
// run's id.
func insert(t *testing.T, st *store.Store, jobID int64, r run) int64 {
	t.Helper()
	if r.trigger == "" {
		r.trigger = store.TriggerCron
	}
	id := storetest.InsertID(t, st, `INSERT INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch,
		created_at, started_at, finished_at, app) VALUES (?, ?, ?, ?, '', 2, 1, ?, ?, ?, ?)`,
		jobID, r.scheduled, r.trigger, r.status, r.scheduled, null(r.started), null(r.finished), r.app)
	if r.firstSlotStartedAt != nil {
		for slot, start := range []int64{*r.firstSlotStartedAt + 700, *r.firstSlotStartedAt} {
			_, err := st.DB().Exec(`INSERT INTO slot_attempt (run_id, slot, attempt, status, started_at) VALUES (?, ?, 1, 'succeeded', ?)`, id, slot, start)
			require.NoError(t, err)
		}
	}
	return id
}

// aggregator returns an aggregator on st whose folded minutes are added
// to *folded (under mu).
func aggregator(t *testing.T, st *store.Store, clk clock.Clock, mu *sync.Mutex, folded *[]int64) *runstats.Aggregator {
	t.Helper()
	a, err := runstats.New(runstats.Config{Clock: clk, Backfill: 10 * time.Minute, Logger: quiet, OnFold: func(m int64) {
		mu.Lock()
		defer mu.Unlock()
		*folded = append(*folded, m)
	}}, st)
	require.NoError(t, err)
	return a
}

func minutes(from, to time.Duration) []int64 {
	var out []int64
	for d := from; d < to; d += time.Minute {
		out = append(out, at(d))
	}
	return out
}

// TestFoldsEachMinuteOnce: two aggregators folding at once fold every
// closed minute with a run start or end exactly once between them (none
// twice, none left out) and skip the quiet minute 2; a new
// aggregator (a restart, another leader) goes on from the cursor, skipping
// to the minute a run ended in; a run
// fired in the first minute that ends twelve minutes later, after that
// minute was folded, is counted in the minute it ended; the sums equal a
// direct count of the runs.
func TestFoldsEachMinuteOnce(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		runs := []run{
			{app: "a", status: store.RunSucceeded, scheduled: at(0), started: ptr(at(time.Second)), finished: ptr(at(30 * time.Second)), firstSlotStartedAt: ptr(at(50 * time.Millisecond))},
			{app: "a", status: store.RunSucceeded, scheduled: at(0), started: ptr(at(time.Second)), finished: ptr(at(40 * time.Second)), firstSlotStartedAt: ptr(at(300 * time.Millisecond))},
			{app: "b", status: store.RunFailed, scheduled: at(0), started: ptr(at(2 * time.Second)), finished: ptr(at(time.Minute + time.Second)), firstSlotStartedAt: ptr(at(20 * time.Second))},
			{app: "b", status: store.RunSkipped, scheduled: at(3 * time.Minute), finished: ptr(at(3 * time.Minute))},
			{app: "a", status: store.RunCancelled, scheduled: at(4 * time.Minute), started: ptr(at(4 * time.Minute)), finished: ptr(at(5 * time.Minute)), firstSlotStartedAt: ptr(at(4*time.Minute + 2*time.Second))},
			{app: "a", trigger: store.TriggerRetry, status: store.RunPartiallyFailed, scheduled: at(6 * time.Minute), started: ptr(at(6 * time.Minute)), finished: ptr(at(7 * time.Minute)), firstSlotStartedAt: ptr(at(6 * time.Minute))},
		}
		for i, r := range runs {
			insert(t, st, int64(i+1), r)
		}
		// The late one: fired at 0, started, still running when its minute is folded.
		late := insert(t, st, 99, run{app: "a", status: store.RunRunning, scheduled: at(0), started: ptr(at(5 * time.Second)), firstSlotStartedAt: ptr(at(90 * time.Second))})

		clk := clock.NewManual(base.Add(10 * time.Minute))
		var mu sync.Mutex
		var folded []int64
		a, b := aggregator(t, st, clk, &mu, &folded), aggregator(t, st, clk, &mu, &folded)
		var wg sync.WaitGroup
		for _, x := range []*runstats.Aggregator{a, b} {
			wg.Go(func() {
				next, err := x.FoldDue(ctx)
				if err != nil {
					t.Errorf("fold: %v", err)
				}
				if !next.Equal(base.Add(10*time.Minute + runstats.DefaultDelay)) {
					t.Errorf("next due at %s", next)
				}
			})
		}
		wg.Wait()
		slices.Sort(folded)
		want := slices.DeleteFunc(minutes(0, 9*time.Minute), func(m int64) bool { return m == at(2*time.Minute) })
		require.Equal(t, want, folded, "minutes 0-8 folded once each but the quiet 2, skipped (8 is folded: the folder is not behind by more than a minute there; 9 closes at 10:10, due 15 s later)")
		until, ok, err := st.RunStatsFoldedUntil(ctx)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, at(9*time.Minute), until)

		// The late run ends at 12:30; a new aggregator (restart) goes on.
		_, err = st.DB().Exec("UPDATE job_run SET status = ?, finished_at = ? WHERE id = ?", store.RunFailed, at(12*time.Minute+30*time.Second), late)
		require.NoError(t, err)
		clk.Set(base.Add(14 * time.Minute))
		folded = nil
		_, err = aggregator(t, st, clk, &mu, &folded).FoldDue(ctx)
		require.NoError(t, err)
		require.Equal(t, []int64{at(12 * time.Minute)}, folded, "9-11 quiet, skipped; 12 folded")
		until, _, err = st.RunStatsFoldedUntil(ctx)
		require.NoError(t, err)
		require.Equal(t, at(13*time.Minute), until)

		stats, err := st.RunStats(ctx, store.RunStatFilter{FromMS: at(0), ToMS: at(13 * time.Minute)})
		require.NoError(t, err)
		byMinute := map[int64]store.RunStat{}
		var total store.RunStat
		for _, s := range stats {
			byMinute[s.Minute] = s
			total.Add(s)
		}
		first := byMinute[at(0)]
		require.EqualValues(t, 4, first.Started, "minute 0: four runs started")
		require.EqualValues(t, 2, first.Succeeded)
		require.EqualValues(t, 1, byMinute[at(time.Minute)].Failed)
		lateMinute := byMinute[at(12*time.Minute)]
		require.EqualValues(t, 1, lateMinute.Failed, "the late run counted in the minute it ended")
		require.EqualValues(t, 1, lateMinute.Lag[store.LagBucket(90_000)], "with its start lag (90 s)")
		require.EqualValues(t, 1, byMinute[at(3*time.Minute)].Skipped)
		require.EqualValues(t, 1, byMinute[at(5*time.Minute)].Cancelled)
		require.EqualValues(t, 1, byMinute[at(7*time.Minute)].Failed, "partially failed counts as failed")
		require.Zero(t, byMinute[at(7*time.Minute)].LagRuns(), "a retry's lag is not a start lag")

		// The sums against a direct count of the runs.
		var direct struct {
			Started   int64 `db:"started"`
			Succeeded int64 `db:"succeeded"`
			Failed    int64 `db:"failed"`
			Cancelled int64 `db:"cancelled"`
			Skipped   int64 `db:"skipped"`
		}
		require.NoError(t, st.DB().Get(&direct, `SELECT
			SUM(CASE WHEN started_at IS NOT NULL THEN 1 ELSE 0 END) AS started,
			SUM(CASE WHEN status = 'succeeded' THEN 1 ELSE 0 END) AS succeeded,
			SUM(CASE WHEN status IN ('failed', 'partially_failed') THEN 1 ELSE 0 END) AS failed,
			SUM(CASE WHEN status = 'cancelled' THEN 1 ELSE 0 END) AS cancelled,
			SUM(CASE WHEN status = 'skipped' THEN 1 ELSE 0 END) AS skipped FROM job_run`))
		require.Equal(t, direct.Started, total.Started)
		require.Equal(t, direct.Succeeded, total.Succeeded)
		require.Equal(t, direct.Failed, total.Failed)
		require.Equal(t, direct.Cancelled, total.Cancelled)
		require.Equal(t, direct.Skipped, total.Skipped)
		require.EqualValues(t, 5, total.LagRuns(), "every run that started a slot, retries aside")

		// Apps scope the sums.
		onlyB, err := st.RunStats(ctx, store.RunStatFilter{FromMS: at(0), ToMS: at(13 * time.Minute), Apps: []string{"b"}})
		require.NoError(t, err)
		var b2 store.RunStat
		for _, s := range onlyB {
			b2.Add(s)
		}
		require.EqualValues(t, 1, b2.Started)
		require.EqualValues(t, 1, b2.Failed)
		require.EqualValues(t, 1, b2.Skipped)
		require.Zero(t, b2.Succeeded)
		none, err := st.RunStats(ctx, store.RunStatFilter{FromMS: at(0), ToMS: at(13 * time.Minute), Apps: []string{}})
		require.NoError(t, err)
		require.Empty(t, none)
	})
}

// TestFirstStartSkipsTheQuietDay: a new installation's first fold starts a
// day back (the default backfill) with one run an hour ago: the 1,440
// closed minutes cost one fold (the run's minute) and two skips, not 1,440
// transactions; the run is counted, and a minute that closes afterwards is
// folded as usual.
func TestFirstStartSkipsTheQuietDay(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := base.Add(24 * time.Hour)
		insert(t, st, 1, run{app: "a", status: store.RunSucceeded, scheduled: at(23 * time.Hour), started: ptr(at(23*time.Hour + time.Second)),
			finished: ptr(at(23*time.Hour + 2*time.Second)), firstSlotStartedAt: ptr(at(23*time.Hour + time.Second))})
		clk := clock.NewManual(now.Add(20 * time.Second))
		var folded []int64
		a, err := runstats.New(runstats.Config{Clock: clk, Logger: quiet, OnFold: func(m int64) { folded = append(folded, m) }}, st)
		require.NoError(t, err)
		_, err = a.FoldDue(ctx)
		require.NoError(t, err)
		require.Equal(t, []int64{at(23 * time.Hour)}, folded, "only the run's minute is folded")
		until, _, err := st.RunStatsFoldedUntil(ctx)
		require.NoError(t, err)
		require.Equal(t, now.UnixMilli(), until, "every closed minute is behind the cursor")
		stats, err := st.RunStats(ctx, store.RunStatFilter{FromMS: base.UnixMilli(), ToMS: now.UnixMilli()})
		require.NoError(t, err)
		require.Len(t, stats, 1)
		require.EqualValues(t, 1, stats[0].Started)
		require.EqualValues(t, 1, stats[0].Succeeded)

		insert(t, st, 2, run{app: "a", status: store.RunFailed, scheduled: now.UnixMilli(), started: ptr(now.UnixMilli() + 1000), finished: ptr(now.UnixMilli() + 2000)})
		clk.Set(now.Add(time.Minute + 20*time.Second))
		folded = nil
		_, err = a.FoldDue(ctx)
		require.NoError(t, err)
		require.Equal(t, []int64{now.UnixMilli()}, folded, "the next closed minute, folded as usual")
	})
}

// TestPercentilesFromBuckets: the start-lag percentiles computed from the
// folded histogram name the bucket that holds the exact percentile of the
// same runs (nearest rank), over two minutes summed.
func TestPercentilesFromBuckets(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(7, 31))
		var lags []int64
		for i := range 300 {
			// Log-uniform from 10 ms to about 30 min, so that every bucket has some.
			lag := int64(10 * math.Pow(10, rng.Float64()*5.3))
			lags = append(lags, lag)
			end := at(time.Duration(i%2)*time.Minute + time.Duration(i)*100*time.Millisecond)
			insert(t, st, int64(i+1), run{app: []string{"a", "b", "c"}[i%3], status: store.RunSucceeded,
				scheduled: at(-time.Hour), started: ptr(at(-time.Hour)), finished: ptr(end), firstSlotStartedAt: ptr(at(-time.Hour) + lag)})
		}
		clk := clock.NewManual(base.Add(5 * time.Minute))
		a, err := runstats.New(runstats.Config{Clock: clk, Backfill: 5 * time.Minute, Logger: quiet}, st)
		require.NoError(t, err)
		_, err = a.FoldDue(ctx)
		require.NoError(t, err)
		stats, err := st.RunStats(ctx, store.RunStatFilter{FromMS: at(0), ToMS: at(2 * time.Minute)})
		require.NoError(t, err)
		require.Len(t, stats, 2)
		var sum store.RunStat
		for _, s := range stats {
			sum.Add(s)
		}
		require.EqualValues(t, len(lags), sum.LagRuns())
		slices.Sort(lags)
		for _, q := range []float64{0.5, 0.9, 0.95, 0.99, 1} {
			exact := lags[int(math.Ceil(q*float64(len(lags))))-1]
			bound, above, ok := sum.LagPercentile(q)
			require.True(t, ok)
			i := store.LagBucket(exact)
			if i == len(store.LagBoundsMS) {
				require.True(t, above, "q %v: exact %d ms is beyond every bound", q, exact)
				require.Equal(t, store.LagBoundsMS[i-1], bound)
				continue
			}
			require.False(t, above, "q %v", q)
			require.Equal(t, store.LagBoundsMS[i], bound, "q %v: exact %d ms", q, exact)
			require.LessOrEqual(t, exact, bound)
			if i > 0 {
				require.Greater(t, exact, store.LagBoundsMS[i-1])
			}
		}
		_, _, ok := store.RunStat{}.LagPercentile(0.5)
		require.False(t, ok, "no runs, no percentile")
	})
}

// TestRunDuringATerm: the loop (Run started as the server starts the
// term's duties) folds what is due when a term starts and stops with the
// term (goleak checks that it does not outlive it).
func TestRunDuringATerm(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, "sqlite")
	for i, d := range []time.Duration{10 * time.Second, 70 * time.Second} { // a run in each of minutes 0 and 1
		insert(t, st, int64(i+1), run{app: "a", status: store.RunSucceeded, scheduled: at(d), started: ptr(at(d)), finished: ptr(at(d + time.Second))})
	}
	clk := clock.NewManual(base.Add(3 * time.Minute))
	got := make(chan int64, 16)
	a, err := runstats.New(runstats.Config{Clock: clk, Backfill: 3 * time.Minute, Logger: quiet, OnFold: func(m int64) { got <- m }}, st)
	require.NoError(t, err)
	duties := loops.Start(context.Background(), loops.Quiet(a.Run))
	for _, want := range minutes(0, 2*time.Minute) {
		select {
		case m := <-got:
			require.Equal(t, want, m)
		case <-time.After(30 * time.Second):
			t.Error("no fold while leading")
		}
	}
	require.NoError(t, duties.Stop())
}

func TestConfig(t *testing.T) {
	t.Parallel()
	c := runstats.Config{}.WithDefaults()
	require.Equal(t, runstats.DefaultDelay, c.Delay)
	require.Equal(t, runstats.DefaultKeep, c.Keep)
	_, err := runstats.New(runstats.Config{Delay: time.Millisecond}, nil)
	require.ErrorContains(t, err, "delay 1ms: use at least 1s")
	_, err = runstats.New(runstats.Config{Keep: time.Minute}, nil)
	require.ErrorContains(t, err, "keep 1m0s: use at least 1h")
}
