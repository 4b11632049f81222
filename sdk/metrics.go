package sdk

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// readyBeats is how many heartbeat intervals may pass without an answered
// heartbeat before /readyz reports the executor unready.
const readyBeats = 3

// dedupBatchBuckets, in seconds: one claim of a batch of records in the
// dedup table (a few statements).
var dedupBatchBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// execMetrics is the executor's Prometheus instrumentation: a collector that
// reads Stats once per scrape, and the dedup batch histogram.
type execMetrics struct {
	reg   prometheus.Registerer
	coll  *statsCollector
	dedup prometheus.Histogram
}

// registerMetrics registers the executor's collectors on
// Config.MetricsRegisterer, every series labelled app=App.
func (e *Executor) registerMetrics() error {
	if e.cfg.MetricsRegisterer == nil {
		return nil
	}
	reg := prometheus.WrapRegistererWith(prometheus.Labels{"app": e.cfg.App}, e.cfg.MetricsRegisterer)
	m := &execMetrics{
		reg:  reg,
		coll: newStatsCollector(e),
		dedup: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "shardjob", Subsystem: "executor", Name: "dedup_batch_seconds",
			Help:    "Time to claim one batch of records in the dedup table (sdk/records, with records.Config.Observer set to the Executor).",
			Buckets: dedupBatchBuckets,
		}),
	}
	if err := reg.Register(m.coll); err != nil {
		return fmt.Errorf("%w: MetricsRegisterer: %v (is another executor of app %q registered there?)", ErrInvalidConfig, err, e.cfg.App)
	}
	if err := reg.Register(m.dedup); err != nil {
		reg.Unregister(m.coll)
		return fmt.Errorf("%w: MetricsRegisterer: %v", ErrInvalidConfig, err)
	}
	e.metrics = m
	return nil
}

// unregisterMetrics removes the collectors after Stop, so that a new
// executor of the same app may register on the same registry.
func (e *Executor) unregisterMetrics() {
	if m := e.metrics; m != nil {
		m.reg.Unregister(m.coll)
		m.reg.Unregister(m.dedup)
	}
}

// ObserveDedupBatch records the time one batch of keys took to be claimed
// in the dedup table. It makes the Executor a records.Observer: set
// records.Config.Observer to the executor to feed
// shardjob_executor_dedup_batch_seconds. Without MetricsRegisterer it does
// nothing.
func (e *Executor) ObserveDedupBatch(keys int, d time.Duration) {
	if m := e.metrics; m != nil && keys > 0 {
		m.dedup.Observe(d.Seconds())
	}
}

// ready reports whether the executor takes work and an admin answered a
// heartbeat within readyBeats intervals, and why not.
func (e *Executor) ready(now time.Time) (bool, string) {
	e.mu.Lock()
	st, last, every := e.state, e.lastBeat, max(e.cfg.HeartbeatInterval, e.adminInterval)
	e.mu.Unlock()
	switch {
	case st != stateRunning:
		return false, "executor is " + st.String()
	case last.IsZero():
		return false, "no admin has answered a heartbeat yet"
	case now.Sub(last) > readyBeats*every:
		return false, fmt.Sprintf("no admin answered a heartbeat for %s (more than %d intervals of %s)",
			now.Sub(last).Round(time.Millisecond), readyBeats, every)
	}
	return true, ""
}

// probeResponse is the body of /healthz and /readyz.
type probeResponse struct {
	Status     string `json:"status"`
	InstanceID string `json:"instance_id"`
	Reason     string `json:"reason,omitempty"`
}

// serveHealthz: the process is alive and serving HTTP (also while
// draining). Unauthenticated.
func (e *Executor) serveHealthz(w http.ResponseWriter, r *http.Request) {
	if !probeMethod(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, probeResponse{Status: protocol.HealthOK, InstanceID: e.cfg.InstanceID})
}

// serveReadyz: 200 while running and registered with an admin (a heartbeat
// answered recently), 503 otherwise and while draining. Unauthenticated.
func (e *Executor) serveReadyz(w http.ResponseWriter, r *http.Request) {
	if !probeMethod(w, r) {
		return
	}
	ok, why := e.ready(time.Now())
	if !ok {
		writeJSON(w, http.StatusServiceUnavailable, probeResponse{Status: "unready", InstanceID: e.cfg.InstanceID, Reason: why})
		return
	}
	writeJSON(w, http.StatusOK, probeResponse{Status: protocol.HealthOK, InstanceID: e.cfg.InstanceID})
}

// metricsHandler serves Config.MetricsGatherer, or nil without one.
func (e *Executor) metricsHandler() http.Handler {
	if e.cfg.MetricsGatherer == nil {
		return nil
	}
	return promhttp.HandlerFor(e.cfg.MetricsGatherer, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

func probeMethod(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, r.Method+" "+r.URL.Path+": use GET")
		return false
	}
	return true
}

// statsCollector exports Executor.Stats, read once per scrape.
type statsCollector struct {
	e *Executor

	slots, capacity, pending, ready, lastBeat *prometheus.Desc
	started, finished, refused, released      *prometheus.Desc
	acked, beats, beatFailures, resFailures   *prometheus.Desc
	records                                   *prometheus.Desc
}

func newStatsCollector(e *Executor) *statsCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName("shardjob", "executor", name), help, labels, nil)
	}
	return &statsCollector{
		e:            e,
		slots:        d("slots", "Accepted slots not finished, by state: running (handler running) or queued (waiting for capacity).", "state"),
		capacity:     d("capacity", "Slots this executor runs at once (Config.Capacity)."),
		pending:      d("pending_results", "Slot results not yet acknowledged by an admin."),
		ready:        d("ready", "1 when /readyz answers 200: running, and an admin answered a heartbeat recently."),
		lastBeat:     d("last_heartbeat_timestamp_seconds", "Unix time of the last heartbeat an admin answered (0: none yet)."),
		started:      d("slots_started_total", "Handlers started."),
		finished:     d("slots_finished_total", "Slots finished, by status (succeeded, failed, cancelled).", "status"),
		refused:      d("slots_refused_total", "Slot assignments refused (stopping, or MaxPendingResults reached)."),
		released:     d("slots_released_total", "Queued slots given back unstarted to the admin (work stealing)."),
		acked:        d("results_acknowledged_total", "Results acknowledged by an admin, by ack: accepted, or rejected (stale token).", "ack"),
		beats:        d("heartbeats_total", "Heartbeats an admin answered."),
		beatFailures: d("heartbeat_failures_total", "Heartbeats no admin answered."),
		resFailures:  d("result_failures_total", "Result deliveries no admin answered (retried)."),
		records:      d("records_total", "Records counted by finished slots (Task.AddProcessed and the like, sdk/records), by outcome.", "outcome"),
	}
}

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.slots, c.capacity, c.pending, c.ready, c.lastBeat, c.started, c.finished,
		c.refused, c.released, c.acked, c.beats, c.beatFailures, c.resFailures, c.records} {
		ch <- d
	}
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.e.Stats()
	ready, _ := c.e.ready(time.Now())
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge(c.slots, float64(s.Running), "running")
	gauge(c.slots, float64(s.Queued), "queued")
	gauge(c.capacity, float64(c.e.cfg.Capacity))
	gauge(c.pending, float64(s.PendingResults))
	gauge(c.ready, boolFloat(ready))
	last := 0.0
	if !s.LastHeartbeat.IsZero() {
		last = float64(s.LastHeartbeat.UnixMilli()) / 1000
	}
	gauge(c.lastBeat, last)
	counter(c.started, s.Started)
	counter(c.finished, s.Succeeded, protocol.SlotSucceeded)
	counter(c.finished, s.Failed, protocol.SlotFailed)
	counter(c.finished, s.Cancelled, protocol.SlotCancelled)
	counter(c.refused, s.Refused)
	counter(c.released, s.Released)
	counter(c.acked, s.ResultsAccepted, "accepted")
	counter(c.acked, s.ResultsRejected, "rejected")
	counter(c.beats, s.Heartbeats)
	counter(c.beatFailures, s.HeartbeatFailures)
	counter(c.resFailures, s.ResultFailures)
	counter(c.records, s.RecordsProcessed, "processed")
	counter(c.records, s.RecordsSkipped, "skipped")
	counter(c.records, s.RecordsFailed, "failed")
	counter(c.records, s.RecordsUncertain, "uncertain")
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
