package metrics

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
	"github.com/shardjob/shardjob/sql/namedsql"
)

//go:embed queries.sql
var queriesSQL string

//go:generate go run github.com/shardjob/shardjob/sql/namedsql/gen/namegen -pkg metrics -type query -prefix q -o queries_gen.go queries.sql

// queries are the statements of queries.sql, indexed by the constants of
// queries_gen.go; New fails with queriesErr if the file does not load.
var queries, queriesErr = loadQueries(queriesSQL)

func loadQueries(text string) ([]string, error) {
	qs, err := namedsql.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("metrics: queries.sql: %w", err)
	}
	texts, err := namedsql.Portable(qs)
	if err != nil {
		return nil, fmt.Errorf("metrics: queries.sql: %w", err)
	}
	return namedsql.Select(texts, queryNames[:])
}

// The states every gauge reports, 0 when none is counted.
var (
	activeRunStatuses  = []string{store.RunPending, store.RunRunning}
	activeSlotStatuses = []string{store.AttemptAssigned, store.AttemptRunning}
	executorStates     = []string{store.ExecutorOnline, store.ExecutorDraining, store.ExecutorLost, store.ExecutorGone}
)

// clusterSnapshot is one refresh of the cluster gauges.
type clusterSnapshot struct {
	at        time.Time
	dbOK      bool
	runs      map[string]int64
	slots     map[string]int64
	executors map[string]int64
	queue     []queueDepth
	breakers  []breakerState
	epoch     int64
	zkOK      bool
}

// clusterCollector exports what is counted in the database and the
// ZooKeeper probe. A scrape refreshes them when the last refresh is older
// than RefreshEvery; concurrent scrapes share one refresh.
type clusterCollector struct {
	cfg Config
	log *slog.Logger

	runs, slots, executors, epoch, zk, queue, breaker *prometheus.Desc
	refreshErrors                                     prometheus.Counter

	mu   sync.Mutex
	last clusterSnapshot
}

func newClusterCollector(cfg Config) *clusterCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
	}
	return &clusterCollector{
		cfg:       cfg,
		log:       cfg.Logger,
		runs:      d("runs", "Runs not finished yet, by status (pending, running), counted in the platform database: the same on every replica.", "status"),
		slots:     d("slots", "Current slot attempts not finished yet, by status (assigned: pushed or queued on an executor, running), counted in the platform database.", "status"),
		executors: d("executors", "Executors known to the platform database, by state (online, draining, lost, gone).", "state"),
		queue:     d("queue_depth", "Due runs that have not started (pending), by app and priority, the oldest 100,000 at most: what waits for an executor, a cap, a wait or its turn (GET /api/v1/queue says why).", "app", "priority"),
		breaker:   d("breaker_state", "The circuit breaker of a job that has one with a state (docs/failures.md): 0 closed (failures counted), 1 open (its runs and retries are held), 2 probing. A job absent is closed with none counted.", "app", "job"),
		epoch:     d("leader_epoch", "Leader epoch recorded in the platform database (the fencing token of the current leader)."),
		zk:        d("zookeeper_connected", "1 when this replica has a usable ZooKeeper session (it can campaign and lead), else 0."),
		refreshErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "metrics_refresh_errors_total",
			Help: "Refreshes of the database-counted gauges that failed; those gauges are left out of the scrape until a refresh succeeds.",
		}),
	}
}

func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	if c.cfg.DB != nil {
		ch <- c.runs
		ch <- c.slots
		ch <- c.executors
		ch <- c.queue
		ch <- c.breaker
		ch <- c.epoch
	}
	if c.cfg.Coordinator != nil {
		ch <- c.zk
	}
	c.refreshErrors.Describe(ch)
}

func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.snapshot()
	if c.cfg.DB != nil && s.dbOK {
		gauges := func(d *prometheus.Desc, known []string, counts map[string]int64) {
			for _, k := range known {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(counts[k]), k)
			}
		}
		gauges(c.runs, activeRunStatuses, s.runs)
		gauges(c.slots, activeSlotStatuses, s.slots)
		gauges(c.executors, executorStates, s.executors)
		for _, q := range s.queue {
			ch <- prometheus.MustNewConstMetric(c.queue, prometheus.GaugeValue, float64(q.runs), q.app, protocol.Priority(q.priority).String())
		}
		for _, b := range s.breakers {
			ch <- prometheus.MustNewConstMetric(c.breaker, prometheus.GaugeValue, store.BreakerStateValue(b.state), b.app, b.job)
		}
		ch <- prometheus.MustNewConstMetric(c.epoch, prometheus.GaugeValue, float64(s.epoch))
	}
	if c.cfg.Coordinator != nil {
		v := 0.0
		if s.zkOK {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.zk, prometheus.GaugeValue, v)
	}
	c.refreshErrors.Collect(ch)
}

// snapshot returns the cached snapshot, refreshed first when stale.
func (c *clusterCollector) snapshot() clusterSnapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock.Now()
	if !c.last.at.IsZero() && now.Sub(c.last.at) < c.cfg.RefreshEvery && !now.Before(c.last.at) {
		return c.last
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.RefreshTimeout)
	defer cancel()
	s := clusterSnapshot{at: now}
	if c.cfg.DB != nil {
		var err error
		s.runs, s.slots, s.executors, s.epoch, err = countCluster(ctx, c.cfg.DB)
		if err == nil {
			s.queue, err = countQueue(ctx, c.cfg.DB, now)
		}
		if err == nil {
			s.breakers, err = breakerStates(ctx, c.cfg.DB)
		}
		s.dbOK = err == nil
		if err != nil {
			c.refreshErrors.Inc()
			c.log.Debug("metrics: cannot count runs, slots and executors", "err", trimErr(err))
		}
	}
	if c.cfg.Coordinator != nil {
		s.zkOK = c.cfg.Coordinator(ctx) == nil
	}
	c.last = s
	return s
}

// countCluster runs queries.sql.
func countCluster(ctx context.Context, db *sql.DB) (runs, slots, executors map[string]int64, epoch int64, err error) {
	if runs, err = countBy(ctx, db, qRunsActive); err != nil {
		return
	}
	if slots, err = countBy(ctx, db, qSlotsActive); err != nil {
		return
	}
	if executors, err = countBy(ctx, db, qExecutorsByState); err != nil {
		return
	}
	if err = db.QueryRowContext(ctx, queries[qLeaderEpoch]).Scan(&epoch); err != nil {
		err = fmt.Errorf("metrics query LeaderEpoch: %w", err)
	}
	return
}

// queueDepth is the due pending runs of one app and priority.
type queueDepth struct {
	app      string
	priority int
	runs     int64
}

// countQueue counts the due pending runs by app and priority.
func countQueue(ctx context.Context, db *sql.DB, now time.Time) ([]queueDepth, error) {
	rows, err := db.QueryContext(ctx, queries[qQueueDepth], now.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("metrics query QueueDepth: %w", err)
	}
	defer rows.Close()
	var out []queueDepth
	for rows.Next() {
		var q queueDepth
		if err := rows.Scan(&q.app, &q.priority, &q.runs); err != nil {
			return nil, fmt.Errorf("metrics query QueueDepth: %w", err)
		}
		out = append(out, q)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("metrics query QueueDepth: %w", err)
	}
	return out, nil
}

func countBy(ctx context.Context, db *sql.DB, name query) (map[string]int64, error) {
	rows, err := db.QueryContext(ctx, queries[name])
	if err != nil {
		return nil, fmt.Errorf("metrics query %s: %w", name, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return nil, fmt.Errorf("metrics query %s: %w", name, err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("metrics query %s: %w", name, err)
	}
	return out, nil
}

// breakerState is one job's circuit breaker.
type breakerState struct{ app, job, state string }

// breakerStates runs BreakerStates.
func breakerStates(ctx context.Context, db *sql.DB) ([]breakerState, error) {
	rows, err := db.QueryContext(ctx, queries[qBreakerStates])
	if err != nil {
		return nil, fmt.Errorf("metrics query BreakerStates: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []breakerState
	for rows.Next() {
		var b breakerState
		if err := rows.Scan(&b.app, &b.job, &b.state); err != nil {
			return nil, fmt.Errorf("metrics query BreakerStates: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("metrics query BreakerStates: %w", err)
	}
	return out, nil
}
