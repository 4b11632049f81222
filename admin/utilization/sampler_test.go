package utilization_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/internal/loops"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/utilization"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// sampled returns a sampler on st whose samples are reported on the
// channel (never blocking the sampler).
func sampled(t *testing.T, st *store.Store, interval time.Duration) (*utilization.Sampler, chan int64) {
	t.Helper()
	ch := make(chan int64, 64)
	s, err := utilization.New(utilization.Config{Interval: interval, Logger: quiet, OnSample: func(n int64, err error) {
		if err != nil {
			t.Errorf("sample: %v", err)
			return
		}
		select {
		case ch <- n:
		default:
		}
	}}, st)
	require.NoError(t, err)
	return s, ch
}

func executors(t *testing.T, st *store.Store, apps ...string) {
	t.Helper()
	for i, app := range apps {
		_, err := st.Heartbeat(context.Background(), store.ExecutorInfo{InstanceID: app + "-" + time.Duration(i).String(), App: app, Address: "http://127.0.0.1:1", Capacity: 4})
		require.NoError(t, err)
	}
}

func count(t *testing.T, st *store.Store) int {
	t.Helper()
	var n int
	require.NoError(t, st.DB().Get(&n, "SELECT COUNT(*) FROM utilization_sample"))
	return n
}

// TestSamplerDuringATerm: a term (Run started as the server starts the
// term's duties) samples at once, one row per app, and stops sampling when
// it ends, term after term (goleak checks that no loop outlives its term).
func TestSamplerDuringATerm(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		executors(t, st, "a", "b", "b")
		s, samples := sampled(t, st, time.Hour)
		for range 5 {
			duties := loops.Start(context.Background(), loops.Quiet(s.Run))
			select {
			case n := <-samples:
				require.EqualValues(t, 2, n, "apps a and b")
			case <-time.After(30 * time.Second):
				t.Error("no sample while leading")
			}
			require.NoError(t, duties.Stop())
		}
		require.Equal(t, 10, count(t, st), "five terms, one sample each (the next is an hour away), two apps")
	})
}

// TestSamplerEveryInterval: after the first sample, one every Interval.
func TestSamplerEveryInterval(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, "sqlite")
	executors(t, st, "a")
	s, samples := sampled(t, st, utilization.MinInterval)
	require.Equal(t, utilization.MinInterval, s.Interval())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	defer func() { cancel(); <-done }()
	for range 2 {
		select {
		case n := <-samples:
			require.EqualValues(t, 1, n)
		case <-time.After(30 * time.Second):
			t.Fatal("no sample")
		}
	}
	require.GreaterOrEqual(t, count(t, st), 2)
}

func TestSamplerConfig(t *testing.T) {
	t.Parallel()
	require.Equal(t, utilization.DefaultInterval, utilization.Config{}.WithDefaults().Interval)
	_, err := utilization.New(utilization.Config{Interval: 500 * time.Millisecond}, nil)
	require.ErrorContains(t, err, "sample interval 500ms: use at least 1s")
}
