package sdk

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// get fetches url without keeping the connection (no idle goroutine left
// for goleak).
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// metricValue returns the value of the series (name{labels}) in a scrape.
func metricValue(t *testing.T, text, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, line)
			return f
		}
	}
	t.Fatalf("scrape lacks %s:\n%s", series, text)
	return 0
}

func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	reg := prometheus.NewRegistry()
	count := func(ctx context.Context, task *Task) error {
		task.AddProcessed(5)
		task.AddSkipped(2)
		task.AddFailed(1)
		task.AddUncertain(1)
		return nil
	}
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"count": count}, func(c *Config) {
		c.MetricsRegisterer, c.MetricsGatherer = reg, reg
		// Ready means a heartbeat answered within 3 intervals: the tests'
		// usual 20ms would make readiness a race with a loaded machine.
		c.HeartbeatInterval = time.Second
	})
	waitExec(t, e, "an answered heartbeat", func(s Stats) bool { return s.Heartbeats > 0 })
	require.Equal(t, []int64{11, 12}, fa.assignPush(t, e, run("count", 11, 12)))
	fa.waitResult(t, 11)
	fa.waitResult(t, 12)
	waitExec(t, e, "both results acknowledged", func(s Stats) bool { return s.ResultsAccepted == 2 })
	e.ObserveDedupBatch(100, 3*time.Millisecond)

	code, body := get(t, e.Addr()+"/metrics")
	require.Equal(t, http.StatusOK, code)
	for series, want := range map[string]float64{
		`shardjob_executor_slots_started_total{app="billing"}`:                       2,
		`shardjob_executor_slots_finished_total{app="billing",status="succeeded"}`:   2,
		`shardjob_executor_slots_finished_total{app="billing",status="failed"}`:      0,
		`shardjob_executor_slots{app="billing",state="running"}`:                     0,
		`shardjob_executor_slots{app="billing",state="queued"}`:                      0,
		`shardjob_executor_capacity{app="billing"}`:                                  DefaultCapacity,
		`shardjob_executor_pending_results{app="billing"}`:                           0,
		`shardjob_executor_results_acknowledged_total{ack="accepted",app="billing"}`: 2,
		`shardjob_executor_records_total{app="billing",outcome="processed"}`:         10,
		`shardjob_executor_records_total{app="billing",outcome="skipped"}`:           4,
		`shardjob_executor_records_total{app="billing",outcome="failed"}`:            2,
		`shardjob_executor_records_total{app="billing",outcome="uncertain"}`:         2,
		`shardjob_executor_dedup_batch_seconds_count{app="billing"}`:                 1,
		`shardjob_executor_ready{app="billing"}`:                                     1,
	} {
		require.Equal(t, want, metricValue(t, body, series), series)
	}
	require.Positive(t, metricValue(t, body, `shardjob_executor_heartbeats_total{app="billing"}`))
	require.Positive(t, metricValue(t, body, `shardjob_executor_last_heartbeat_timestamp_seconds{app="billing"}`))
	testenv.PromtoolCheck(t, []byte(body))

	for _, path := range []string{"/healthz", "/readyz"} {
		code, body := get(t, e.Addr()+path)
		require.Equal(t, http.StatusOK, code, path+": "+body)
	}

	// One registry, one executor per app.
	_, err := New(Config{App: "billing", Admins: []string{fa.URL()}, Secret: testSecret, MetricsRegisterer: reg})
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, "MetricsRegisterer")
}

func TestMetricsOffByDefault(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"noop": noop}, nil)
	code, _ := get(t, e.Addr()+"/metrics")
	require.Equal(t, http.StatusNotFound, code)
	e.ObserveDedupBatch(10, time.Millisecond) // no registry: a no-op
}

// TestReadyz: unready before an admin answered, ready after, unready (503)
// while draining; healthz stays 200 throughout. Stop unregisters the
// metrics, so that a new executor of the app can register.
func TestReadyz(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()

	lonely := newExecutor(t, []string{deadURL(t)}, map[string]Handler{"noop": noop}, func(c *Config) { c.InstanceID = "lonely" })
	code, body := get(t, lonely.Addr()+"/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "no admin has answered a heartbeat yet")
	code, _ = get(t, lonely.Addr()+"/healthz")
	require.Equal(t, http.StatusOK, code)

	fa := newFakeAdmin(t, testSecret)
	g := newGate()
	e := buildExecutor(t, []string{fa.URL()}, map[string]Handler{"work": g.handle}, func(c *Config) {
		c.MetricsRegisterer, c.MetricsGatherer = reg, reg
		c.HeartbeatInterval = time.Second // ready: answered within 3 intervals (see TestMetricsEndpoint)
	})
	require.NoError(t, e.Start(context.Background()))
	waitExec(t, e, "an answered heartbeat", func(s Stats) bool { return s.Heartbeats > 0 })
	code, body = get(t, e.Addr()+"/readyz")
	require.Equal(t, http.StatusOK, code, body)

	require.Equal(t, []int64{21}, fa.assignPush(t, e, run("work", 21)))
	recv(t, g.started, "the slot")
	stopped := make(chan error, 1)
	go func() { stopped <- e.Stop(context.Background()) }()
	fa.waitFor(t, "a draining heartbeat", func(f *fakeAdmin) bool {
		hb, ok := f.lastHeartbeat()
		return ok && hb.Draining
	})
	code, body = get(t, e.Addr()+"/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "draining")
	code, _ = get(t, e.Addr()+"/healthz")
	require.Equal(t, http.StatusOK, code)
	code, body = get(t, e.Addr()+"/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, 0.0, metricValue(t, body, `shardjob_executor_ready{app="billing"}`))
	g.release <- struct{}{}
	require.NoError(t, recv(t, stopped, "Stop"))

	mfs, err := reg.Gather()
	require.NoError(t, err)
	require.Empty(t, mfs, "Stop unregisters the executor's metrics")
	again, err := New(Config{App: "billing", Admins: []string{fa.URL()}, Secret: testSecret, MetricsRegisterer: reg})
	require.NoError(t, err)
	require.NoError(t, again.Stop(context.Background()))
}
