package metrics

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
)

// Namespace prefixes every metric of shardjob.
const Namespace = "shardjob"

// StatsSource is what the scheduler counters are read from
// (*scheduler.Scheduler).
type StatsSource interface {
	Stats() scheduler.Stats
}

// Config of the metrics of one admin replica. Every field is optional.
type Config struct {
	// Scheduler: firings and other leader counters, read at scrape time.
	// Nil: those metrics are not exported.
	Scheduler StatsSource
	// DB is the platform database pool: its pool statistics, and the
	// cluster gauges counted in it (runs, slots, executors, leader epoch).
	// Nil: none of those.
	DB *sql.DB
	// Coordinator probes the ZooKeeper session: nil error when it is usable.
	// Nil (standalone mode): shardjob_zookeeper_connected is not exported.
	Coordinator func(ctx context.Context) error
	// Partitions counts the scheduling partitions this replica owns now
	// (admin/ownership). Nil: shardjob_partitions_owned is not exported.
	Partitions func() int
	// PartitionLags returns the firing lag of each scheduling partition
	// this replica owns (how long its earliest due job has waited to
	// fire), read at every scrape within RefreshTimeout. Nil:
	// shardjob_partition_firing_lag_seconds is not exported.
	PartitionLags func(ctx context.Context) (map[int]time.Duration, error)
	// RefreshEvery is the longest the cluster gauges and the ZooKeeper probe
	// are reused before a scrape refreshes them. Default 10s.
	RefreshEvery time.Duration
	// RefreshTimeout bounds one refresh (the queries and the probe).
	// Default 2s.
	RefreshTimeout time.Duration
	// Logger receives refresh failures (Debug: they are counted in
	// shardjob_metrics_refresh_errors_total). Default slog.Default().
	Logger *slog.Logger
	// Clock is the clock of the refresh cache. Default clock.System.
	Clock clock.Clock
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.RefreshEvery <= 0 {
		c.RefreshEvery = 10 * time.Second
	}
	if c.RefreshTimeout <= 0 {
		c.RefreshTimeout = 2 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = clock.System
	}
	return c
}

// Metrics holds the registry of one admin replica and the instruments fed
// by hooks. Its methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	fireLag      *prometheus.HistogramVec
	capWait      *prometheus.HistogramVec
	slotResults  *prometheus.CounterVec
	deadlines    *prometheus.CounterVec
	flowRuns     *prometheus.HistogramVec
	slotDuration *prometheus.HistogramVec
	records      *prometheus.CounterVec
	leader       prometheus.Gauge
	leaderEpoch  prometheus.Gauge
	leaderChange *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
}

// Label values created up front, so that their series exist (at 0) before
// the first event: rate() and absence alerts need them.
var (
	triggerKinds = []string{store.TriggerCron, store.TriggerManual, store.TriggerCatchUp, store.TriggerRetry, store.TriggerChild, store.TriggerAPI, store.TriggerBackfill}
	slotStatuses = []string{store.AttemptSucceeded, store.AttemptFailed, store.AttemptCancelled}
	recordKinds  = []string{"processed", "skipped", "failed", "uncertain"}
	flowEnds     = []string{store.RunSucceeded, store.RunPartiallyFailed, store.RunFailed, store.RunCancelled}
)

// Buckets, in seconds.
var (
	// fireLagBuckets: a healthy leader dispatches within a poll interval
	// (200ms); minutes mean no executor was online or a misfire.
	fireLagBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900}
	// slotDurationBuckets: batch slots run from under a second to hours.
	slotDurationBuckets = []float64{0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200, 14400}
	// httpBuckets: API and executor protocol requests.
	httpBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

// New builds the registry and registers every collector cfg allows.
func New(cfg Config) (*Metrics, error) {
	if queriesErr != nil {
		return nil, queriesErr
	}
	cfg = cfg.WithDefaults()
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		fireLag: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "fire_lag_seconds",
			Help:    "Time from a run's scheduled time to the leader assigning and pushing its slots, by trigger kind.",
			Buckets: fireLagBuckets,
		}, []string{"trigger"}),
		capWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "cap_wait_seconds",
			Help:    "Time from a run's scheduled time to its start, for runs that waited for room under a concurrency cap (max_running_slots) of their app or job, by app.",
			Buckets: fireLagBuckets,
		}, []string{"app"}),
		slotResults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "slot_results_total",
			Help: "Slot results accepted by this replica (current token), by status.",
		}, []string{"status"}),
		deadlines: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "deadlines_missed_total",
			Help: "Run deadlines this replica found missed as leader, by kind (start: run_late_start, finish: run_deadline_missed).",
		}, []string{"kind"}),
		flowRuns: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "workflow_run_duration_seconds",
			Help:    "Workflow runs this replica ended as leader, by end status, and their time from start to end (its _count: the runs ended).",
			Buckets: slotDurationBuckets,
		}, []string{"status"}),
		slotDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "slot_duration_seconds",
			Help:    "Run time of the slots whose result this replica accepted (executor's start to finish), by status.",
			Buckets: slotDurationBuckets,
		}, []string{"status"}),
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "records_total",
			Help: "Records counted in the slot results this replica accepted, by outcome (processed, skipped, failed, uncertain).",
		}, []string{"outcome"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "leader",
			Help: "1 while this replica holds a leader term, else 0.",
		}),
		leaderEpoch: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "leader_term_epoch",
			Help: "Epoch of this replica's current or last leader term (0: never led).",
		}),
		leaderChange: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "leadership_changes_total",
			Help: "Leader terms this replica began (change=acquired) and ended (change=lost).",
		}, []string{"change"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "http_request_duration_seconds",
			Help:    "HTTP requests served, by route template, method and status class.",
			Buckets: httpBuckets,
		}, []string{"route", "method", "status_class"}),
	}
	for _, k := range triggerKinds {
		m.fireLag.WithLabelValues(k)
	}
	for _, s := range slotStatuses {
		m.slotResults.WithLabelValues(s)
		m.slotDuration.WithLabelValues(s)
	}
	for _, k := range recordKinds {
		m.records.WithLabelValues(k)
	}
	for _, st := range flowEnds {
		m.flowRuns.WithLabelValues(st)
	}
	m.leaderChange.WithLabelValues("acquired")
	m.leaderChange.WithLabelValues("lost")
	for _, k := range scheduler.DeadlineKinds {
		m.deadlines.WithLabelValues(k)
	}

	cs := []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.fireLag, m.capWait, m.slotResults, m.deadlines, m.flowRuns, m.slotDuration, m.records, m.leader, m.leaderEpoch, m.leaderChange, m.httpDuration,
	}
	if cfg.Scheduler != nil {
		cs = append(cs, newSchedulerCollector(cfg.Scheduler))
	}
	if cfg.Partitions != nil {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "partitions_owned",
			Help: "Scheduling partitions this replica owns: claimed in the database at the epoch the leader published (docs/architecture.md, Partitions).",
		}, func() float64 { return float64(cfg.Partitions()) }))
	}
	if cfg.PartitionLags != nil {
		cs = append(cs, newPartitionCollector(cfg))
	}
	if cfg.DB != nil {
		cs = append(cs, NewDBPoolCollector("platform", cfg.DB.Stats))
	}
	if cfg.DB != nil || cfg.Coordinator != nil {
		cs = append(cs, newClusterCollector(cfg))
	}
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: register collector: %w", err)
		}
	}
	return m, nil
}

// Registry is the registry of this replica, for tests and for callers that
// add collectors of their own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format. With a
// non-empty token, requests must carry "Authorization: Bearer <token>";
// others get 401.
func (m *Metrics) Handler(token string) http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="shardjob metrics"`)
			http.Error(w, "metrics need Authorization: Bearer <the admin's --metrics-token>", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// RunStarted implements scheduler.Observer: the fire lag of a run.
func (m *Metrics) RunStarted(trigger string, lag time.Duration) {
	m.fireLag.WithLabelValues(trigger).Observe(max(lag, 0).Seconds())
}

// CapWaited implements scheduler.Observer: a run of app that waited for a
// concurrency cap started waited after it was due.
func (m *Metrics) CapWaited(app string, waited time.Duration) {
	m.capWait.WithLabelValues(app).Observe(max(waited, 0).Seconds())
}

// DeadlineMissed implements scheduler.Observer: a run missed a deadline of
// kind (scheduler.DeadlineStart, DeadlineFinish).
func (m *Metrics) DeadlineMissed(kind string) {
	m.deadlines.WithLabelValues(kind).Inc()
}

var _ scheduler.Observer = (*Metrics)(nil)

// WorkflowRunEnded implements workflowrun.Observer: a workflow run ended
// with status after d.
func (m *Metrics) WorkflowRunEnded(status string, d time.Duration) {
	m.flowRuns.WithLabelValues(status).Observe(max(d, 0).Seconds())
}

// SlotResult implements api.ResultObserver: one accepted slot result.
func (m *Metrics) SlotResult(o store.SlotOutcome) {
	m.slotResults.WithLabelValues(o.Status).Inc()
	if o.StartedAt > 0 && o.FinishedAt >= o.StartedAt {
		m.slotDuration.WithLabelValues(o.Status).Observe(float64(o.FinishedAt-o.StartedAt) / 1000)
	}
	for i, n := range []int64{o.Processed, o.Skipped, o.Failed, o.Uncertain} {
		if n > 0 {
			m.records.WithLabelValues(recordKinds[i]).Add(float64(n))
		}
	}
}

// LeaderTerm records that this replica begins a leader term with epoch; the
// returned func records its end. Wrap the elector's lead callback with it.
func (m *Metrics) LeaderTerm(epoch int64) (end func()) {
	m.leaderEpoch.Set(float64(epoch))
	m.leader.Set(1)
	m.leaderChange.WithLabelValues("acquired").Inc()
	var once sync.Once
	return func() {
		once.Do(func() {
			m.leader.Set(0)
			m.leaderChange.WithLabelValues("lost").Inc()
		})
	}
}

// schedulerCollector exports scheduler.Stats, read once per scrape.
type schedulerCollector struct {
	src                                 StatsSource
	firings, reassigned, fence, retried *prometheus.Desc
	stolen                              *prometheus.Desc
}

func newSchedulerCollector(src StatsSource) *schedulerCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
	}
	return &schedulerCollector{
		src:        src,
		firings:    d("firings_total", "Firings handled by this replica (of the scheduling partitions it owns; as leader without partitions), by outcome: fired (run created), skipped (overlap or misfire policy), duplicate (dropped by the unique run key).", "outcome"),
		reassigned: d("slots_reassigned_total", "Slots this replica as leader moved off lost executors."),
		fence:      d("epoch_fence_aborts_total", "Scheduling transactions of this replica refused by an epoch fence: the leader's (another replica leads) or a partition's (it was handed over)."),
		retried:    d("slot_retries_total", "Failed slots this replica as leader gave another attempt."),
		stolen:     d("slots_stolen_total", "Queued slots this replica as leader moved to an idle executor (work stealing)."),
	}
}

func (c *schedulerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.firings, c.reassigned, c.fence, c.retried, c.stolen} {
		ch <- d
	}
}

func (c *schedulerCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.src.Stats()
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(c.firings, s.Fired, "fired")
	counter(c.firings, s.Skipped, "skipped")
	counter(c.firings, s.DuplicateFirings, "duplicate")
	counter(c.reassigned, s.Reassigned)
	counter(c.fence, s.StaleAborts)
	counter(c.retried, s.Retried)
	counter(c.stolen, s.Stolen)
}

// Middleware observes every request's latency, labelled with gin's route
// template (c.FullPath(), e.g. /api/v1/jobs/:id), never the raw URL, whose
// ids and unknown paths would make the label set unbounded. Requests that
// match no route are labelled "unmatched". Install it first (api.Config.Observe)
// so that it sees the final status, panics turned into 500 included.
func (m *Metrics) Middleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		m.ObserveRequest(c.FullPath(), c.Request.Method, c.Writer.Status(), time.Since(start))
	}
}

// ObserveRequest records one request: route is the route template, "" when
// no route matched.
func (m *Metrics) ObserveRequest(route, method string, status int, d time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	m.httpDuration.WithLabelValues(route, methodLabel(method), statusClass(status)).Observe(d.Seconds())
}

// methodLabel bounds the method label to the standard methods.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// statusClass maps 404 to "4xx"; anything outside 100..599 is "unknown".
func statusClass(code int) string {
	if code < 100 || code > 599 {
		return "unknown"
	}
	return string(rune('0'+code/100)) + "xx"
}

// trimErr shortens an error for a log line.
func trimErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// StatsFunc adapts a function to StatsSource, for a scheduler built after
// the metrics (it needs them as its Observer).
type StatsFunc func() scheduler.Stats

// Stats implements StatsSource.
func (f StatsFunc) Stats() scheduler.Stats { return f() }
