package metrics_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/metrics"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestDBPoolCollector(t *testing.T) {
	t.Parallel()
	stats := sql.DBStats{
		MaxOpenConnections: 20, OpenConnections: 7, InUse: 5, Idle: 2,
		WaitCount: 3, WaitDuration: 1500 * time.Millisecond,
		MaxIdleClosed: 4, MaxIdleTimeClosed: 5, MaxLifetimeClosed: 6,
	}
	c := metrics.NewDBPoolCollector("platform", func() sql.DBStats { return stats })
	want := `
# HELP shardjob_db_connections_closed_total Connections closed by the pool, by reason: max_idle (SetMaxIdleConns), max_idle_time (SetConnMaxIdleTime), max_lifetime (SetConnMaxLifetime).
# TYPE shardjob_db_connections_closed_total counter
shardjob_db_connections_closed_total{db="platform",reason="max_idle"} 4
shardjob_db_connections_closed_total{db="platform",reason="max_idle_time"} 5
shardjob_db_connections_closed_total{db="platform",reason="max_lifetime"} 6
# HELP shardjob_db_idle_connections Idle connections.
# TYPE shardjob_db_idle_connections gauge
shardjob_db_idle_connections{db="platform"} 2
# HELP shardjob_db_in_use_connections Connections in use.
# TYPE shardjob_db_in_use_connections gauge
shardjob_db_in_use_connections{db="platform"} 5
# HELP shardjob_db_max_open_connections Maximum number of open connections of the pool (0: unlimited).
# TYPE shardjob_db_max_open_connections gauge
shardjob_db_max_open_connections{db="platform"} 20
# HELP shardjob_db_open_connections Connections open, in use or idle.
# TYPE shardjob_db_open_connections gauge
shardjob_db_open_connections{db="platform"} 7
# HELP shardjob_db_wait_count_total Requests for a connection that had to wait for a free one.
# TYPE shardjob_db_wait_count_total counter
shardjob_db_wait_count_total{db="platform"} 3
# HELP shardjob_db_wait_duration_seconds_total Total time spent waiting for a free connection.
# TYPE shardjob_db_wait_duration_seconds_total counter
shardjob_db_wait_duration_seconds_total{db="platform"} 1.5
`
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))
	lint, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	require.Empty(t, lint)

	// Values are read at every scrape, not once.
	stats.InUse, stats.WaitCount = 6, 4
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP shardjob_db_in_use_connections Connections in use.
# TYPE shardjob_db_in_use_connections gauge
shardjob_db_in_use_connections{db="platform"} 6
`), "shardjob_db_in_use_connections"))
}

// newEngine serves a few routes with the middleware installed first, like
// api.New does.
func newEngine(m *metrics.Metrics) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(m.Middleware())
	r.Use(func(c *gin.Context) {
		defer func() {
			if recover() != nil {
				c.AbortWithStatus(http.StatusInternalServerError)
			}
		}()
		c.Next()
	})
	r.GET("/api/v1/jobs/:id", func(c *gin.Context) { c.String(http.StatusOK, "job "+c.Param("id")) })
	r.POST("/api/v1/jobs/:id/trigger", func(c *gin.Context) { c.Status(http.StatusConflict) })
	r.GET("/assets/*path", func(c *gin.Context) { c.Status(http.StatusOK) })
	r.GET("/boom", func(c *gin.Context) { panic("boom") })
	return r
}

func TestMiddlewareLabelsRouteTemplates(t *testing.T) {
	t.Parallel()
	m, err := metrics.New(metrics.Config{})
	require.NoError(t, err)
	r := newEngine(m)
	for _, req := range []struct{ method, path string }{
		{"GET", "/api/v1/jobs/1"},
		{"GET", "/api/v1/jobs/2?x=secret-token"},
		{"GET", "/api/v1/jobs/3"},
		{"POST", "/api/v1/jobs/42/trigger"},
		{"GET", "/assets/app.js"},
		{"GET", "/no/such/path/9f3b"},
		{"GET", "/boom"},
		{"BREW", "/api/v1/jobs/7"},
	} {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(req.method, req.path, nil))
	}
	got := scrape(t, m.Handler(""))
	for _, series := range []string{
		`shardjob_http_request_duration_seconds_count{method="GET",route="/api/v1/jobs/:id",status_class="2xx"} 3`,
		`shardjob_http_request_duration_seconds_count{method="POST",route="/api/v1/jobs/:id/trigger",status_class="4xx"} 1`,
		`shardjob_http_request_duration_seconds_count{method="GET",route="/assets/*path",status_class="2xx"} 1`,
		`shardjob_http_request_duration_seconds_count{method="GET",route="unmatched",status_class="4xx"} 1`,
		`shardjob_http_request_duration_seconds_count{method="GET",route="/boom",status_class="5xx"} 1`,
		`shardjob_http_request_duration_seconds_count{method="OTHER",route="unmatched",status_class="4xx"} 1`,
	} {
		requireSeries(t, got, series)
	}
	for _, raw := range []string{"/api/v1/jobs/1", "/api/v1/jobs/2", "/api/v1/jobs/42", "secret-token", "app.js", "9f3b", "BREW"} {
		require.NotContains(t, got, raw, "a raw URL part or method leaked into a label")
	}
	testenv.PromtoolCheck(t, []byte(got))
}

func TestHandlerBearerToken(t *testing.T) {
	t.Parallel()
	m, err := metrics.New(metrics.Config{})
	require.NoError(t, err)
	h := m.Handler("s3cret-metrics-token")
	for _, auth := range []string{"", "Bearer wrong", "Basic czNjcmV0", "Bearer s3cret-metrics-token-and-more", "bearer s3cret-metrics-token"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusUnauthorized, rec.Code, "Authorization %q", auth)
		require.NotContains(t, rec.Body.String(), "shardjob_")
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer s3cret-metrics-token")
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), "shardjob_leader ")
}

func TestHooks(t *testing.T) {
	t.Parallel()
	stats := scheduler.Stats{Fired: 5, Skipped: 2, DuplicateFirings: 1, StaleAborts: 3, Reassigned: 4, Retried: 6, Stolen: 7}
	var zkErr error
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	m, err := metrics.New(metrics.Config{
		Scheduler:   metrics.StatsFunc(func() scheduler.Stats { return stats }),
		Coordinator: func(context.Context) error { return zkErr },
		Clock:       clk,
	})
	require.NoError(t, err)
	m.RunStarted(store.TriggerCron, 150*time.Millisecond)
	m.RunStarted(store.TriggerManual, -time.Second) // clamped to 0
	m.SlotResult(store.SlotOutcome{SlotResult: protocol.SlotResult{Status: store.AttemptSucceeded, StartedAt: 1000, FinishedAt: 3500, Processed: 10, Skipped: 2}})
	m.SlotResult(store.SlotOutcome{SlotResult: protocol.SlotResult{Status: store.AttemptFailed, StartedAt: 1000, FinishedAt: 1200, Processed: 1, Failed: 3, Uncertain: 1}})
	m.SlotResult(store.SlotOutcome{SlotResult: protocol.SlotResult{Status: store.AttemptCancelled}}) // never started: no duration
	m.DeadlineMissed(scheduler.DeadlineFinish)
	m.DeadlineMissed(scheduler.DeadlineFinish)
	m.WorkflowRunEnded(store.RunFailed, 90*time.Second)
	end := m.LeaderTerm(17)

	got := scrape(t, m.Handler(""))
	for _, series := range []string{
		`shardjob_firings_total{outcome="fired"} 5`,
		`shardjob_firings_total{outcome="skipped"} 2`,
		`shardjob_firings_total{outcome="duplicate"} 1`,
		`shardjob_epoch_fence_aborts_total 3`,
		`shardjob_slots_reassigned_total 4`,
		`shardjob_slot_retries_total 6`,
		`shardjob_slots_stolen_total 7`,
		`shardjob_fire_lag_seconds_count{trigger="cron"} 1`,
		`shardjob_fire_lag_seconds_sum{trigger="cron"} 0.15`,
		`shardjob_fire_lag_seconds_sum{trigger="manual"} 0`,
		`shardjob_fire_lag_seconds_count{trigger="retry"} 0`,
		`shardjob_deadlines_missed_total{kind="start"} 0`,
		`shardjob_deadlines_missed_total{kind="finish"} 2`,
		`shardjob_workflow_run_duration_seconds_count{status="failed"} 1`,
		`shardjob_workflow_run_duration_seconds_sum{status="failed"} 90`,
		`shardjob_workflow_run_duration_seconds_count{status="succeeded"} 0`,
		`shardjob_slot_results_total{status="succeeded"} 1`,
		`shardjob_slot_results_total{status="failed"} 1`,
		`shardjob_slot_results_total{status="cancelled"} 1`,
		`shardjob_slot_duration_seconds_sum{status="succeeded"} 2.5`,
		`shardjob_slot_duration_seconds_count{status="cancelled"} 0`,
		`shardjob_records_total{outcome="processed"} 11`,
		`shardjob_records_total{outcome="skipped"} 2`,
		`shardjob_records_total{outcome="failed"} 3`,
		`shardjob_records_total{outcome="uncertain"} 1`,
		`shardjob_leader 1`,
		`shardjob_leader_term_epoch 17`,
		`shardjob_leadership_changes_total{change="acquired"} 1`,
		`shardjob_leadership_changes_total{change="lost"} 0`,
		`shardjob_zookeeper_connected 1`,
	} {
		requireSeries(t, got, series)
	}
	require.NotContains(t, got, "shardjob_runs{", "no DB configured: no DB gauges")
	testenv.PromtoolCheck(t, []byte(got))

	end()
	end() // idempotent
	zkErr = errors.New("not connected")
	got = scrape(t, m.Handler(""))
	requireSeries(t, got, "shardjob_zookeeper_connected 1") // the probe is cached for RefreshEvery
	clk.Advance(11 * time.Second)
	got = scrape(t, m.Handler(""))
	for _, series := range []string{
		`shardjob_leader 0`,
		`shardjob_leader_term_epoch 17`,
		`shardjob_leadership_changes_total{change="lost"} 1`,
		`shardjob_zookeeper_connected 0`,
	} {
		requireSeries(t, got, series)
	}
}

func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	body, err := io.ReadAll(rec.Body)
	require.NoError(t, err)
	return string(body)
}

// requireSeries fails unless text has the line series; the message shows
// the shardjob_ lines only (the Go runtime's are many).
func requireSeries(t *testing.T, text, series string) {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if line == series {
			return
		}
	}
	var own []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "shardjob_") && !strings.Contains(line, "_bucket{") {
			own = append(own, line)
		}
	}
	t.Fatalf("scrape lacks %q; shardjob series (buckets left out):\n%s", series, strings.Join(own, "\n"))
}
