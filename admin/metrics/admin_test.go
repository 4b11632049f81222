package metrics_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/server"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/sdk"
	"github.com/shardjob/shardjob/sdk/protocol"
)

const metricsToken = "test-metrics-token-0123456789"

// TestScrapeRealAdmin runs an admin replica (in process, on its own MariaDB
// database) and an executor, lets a cron job fire and its results come
// back, then scrapes both /metrics endpoints: the named series exist with
// plausible values and promtool accepts the text.
func TestScrapeRealAdmin(t *testing.T) {
	t.Parallel()
	dsn := testenv.MySQL(t)
	secret := protocol.NewSecret()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, server.Config{
		ID: "metrics-admin", HTTPAddr: "127.0.0.1:0", DBDriver: "mysql", DBDSN: dsn, ExecutorSecret: secret,
		Timing: protocol.Timing{Heartbeat: 200 * time.Millisecond}, Scheduler: scheduler.Config{PollInterval: 50 * time.Millisecond},
		MetricsToken: metricsToken, Out: io.Discard, Logger: log,
	})
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-served)
	})

	reg := prometheus.NewRegistry()
	ex, err := sdk.New(sdk.Config{
		App: "metrics", Admins: []string{srv.URL()}, Secret: secret, HeartbeatInterval: 200 * time.Millisecond,
		Logger: log, MetricsRegisterer: reg, MetricsGatherer: reg, DisableLogShipping: true,
	})
	require.NoError(t, err)
	ex.Handle("count", func(ctx context.Context, task *sdk.Task) error {
		task.AddProcessed(3)
		task.AddSkipped(1)
		return nil
	})
	require.NoError(t, ex.Start(ctx))
	t.Cleanup(func() { require.NoError(t, ex.Stop(context.Background())) })

	st := srv.Store()
	now, err := st.Now(ctx)
	require.NoError(t, err)
	v, err := jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{App: "metrics", Name: "every-second", Handler: "count", Cron: "* * * * * *", SlotCount: 4}}, now)
	require.NoError(t, err)
	jobID, err := st.CreateJob(ctx, v.Job)
	require.NoError(t, err)
	srv.Scheduler().Wake()
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		runs, err := st.Runs(ctx, store.RunFilter{JobID: jobID, Status: store.RunSucceeded, Limit: 1})
		return len(runs) > 0, err
	}, "a run of the cron job succeeded")

	// A high run of an app without executors waits: the queue's depth.
	v, err = jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{App: "nobody", Name: "waits", Handler: "count", Cron: "@yearly", Priority: "high"}}, now)
	require.NoError(t, err)
	waitsID, err := st.CreateJob(ctx, v.Job)
	require.NoError(t, err)
	_, _, err = st.InsertRun(ctx, 1, store.NewRun{JobID: waitsID, ScheduledAt: now.UnixMilli() - 1000, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 1})
	require.NoError(t, err)

	// Without the token: 401, and nothing leaks.
	code, body := scrape2(t, srv.URL()+"/metrics", "")
	require.Equal(t, http.StatusUnauthorized, code)
	require.NotContains(t, body, "shardjob_")

	code, body = scrape2(t, srv.URL()+"/metrics", metricsToken)
	require.Equal(t, http.StatusOK, code)
	atLeast := map[string]float64{
		`shardjob_firings_total{outcome="fired"}`:                  1,
		`shardjob_fire_lag_seconds_count{trigger="cron"}`:          1,
		`shardjob_slot_results_total{status="succeeded"}`:          4,
		`shardjob_slot_duration_seconds_count{status="succeeded"}`: 4,
		`shardjob_records_total{outcome="processed"}`:              12,
		`shardjob_records_total{outcome="skipped"}`:                4,
		`shardjob_leader`:                                      1,
		`shardjob_leader_epoch`:                                1,
		`shardjob_leader_term_epoch`:                           1,
		`shardjob_leadership_changes_total{change="acquired"}`: 1,
		`shardjob_executors{state="online"}`:                   1,
		`shardjob_db_open_connections{db="platform"}`:          1,
		`shardjob_db_max_open_connections{db="platform"}`:      0,
		`shardjob_runs{status="pending"}`:                      1,
		`shardjob_queue_depth{app="nobody",priority="high"}`:   1,
		`shardjob_slots{status="running"}`:                     0,
		`shardjob_partitions_owned`:                            256, // one replica owns them all
		`shardjob_http_request_duration_seconds_count{method="POST",route="` + protocol.PathHeartbeat + `",status_class="2xx"}`: 1,
		`shardjob_http_request_duration_seconds_count{method="POST",route="` + protocol.PathResults + `",status_class="2xx"}`:   1,
	}
	for series, min := range atLeast {
		require.GreaterOrEqual(t, value(t, body, series), min, series)
	}
	require.Equal(t, 0.0, value(t, body, `shardjob_firings_total{outcome="duplicate"}`))
	// The firing lag of every partition it owns: 256 series; the
	// every-second job's partition fires on time.
	require.Equal(t, 256, strings.Count(body, "\nshardjob_partition_firing_lag_seconds{"), "a lag per owned partition")
	require.Less(t, value(t, body, fmt.Sprintf(`shardjob_partition_firing_lag_seconds{partition="%d"}`, partition.Of(jobID, partition.DefaultCount))), 5.0,
		"the every-second job fires on time")
	require.Equal(t, 0.0, value(t, body, `shardjob_metrics_refresh_errors_total`))
	require.Less(t, value(t, body, `shardjob_fire_lag_seconds_sum{trigger="cron"}`)/value(t, body, `shardjob_fire_lag_seconds_count{trigger="cron"}`),
		60.0, "mean fire lag is plausible (seconds, not milliseconds)")
	require.NotContains(t, body, "shardjob_zookeeper_connected", "standalone coordinator: no ZooKeeper metric")
	testenv.PromtoolCheck(t, []byte(body))

	// The executor's /metrics, after the same run.
	code, body = scrape2(t, ex.Addr()+"/metrics", "")
	require.Equal(t, http.StatusOK, code)
	for series, min := range map[string]float64{
		`shardjob_executor_slots_started_total{app="metrics"}`:                     4,
		`shardjob_executor_slots_finished_total{app="metrics",status="succeeded"}`: 4,
		`shardjob_executor_records_total{app="metrics",outcome="processed"}`:       12,
		`shardjob_executor_heartbeats_total{app="metrics"}`:                        1,
		`shardjob_executor_ready{app="metrics"}`:                                   1,
	} {
		require.GreaterOrEqual(t, value(t, body, series), min, series)
	}
	testenv.PromtoolCheck(t, []byte(body))

	// /readyz reports the database and the schema.
	code, body = scrape2(t, srv.URL()+"/readyz", "")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"database":"ok"`)
	require.Contains(t, body, `"migrations":"ok"`)
}

// scrape2 GETs url (with a bearer token unless empty) on a connection that
// is closed afterwards (goleak).
func scrape2(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Close = true
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// value returns the value of a series (name{labels}) in a scrape.
func value(t *testing.T, text, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, line)
			return f
		}
	}
	requireSeries(t, text, series) // fails, listing the shardjob series
	return 0
}
