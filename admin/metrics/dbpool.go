package metrics

import (
	"database/sql"

	"github.com/prometheus/client_golang/prometheus"
)

// dbPoolCollector exports a database/sql pool's statistics, read once per
// scrape.
type dbPoolCollector struct {
	stats func() sql.DBStats

	maxOpen, open, inUse, idle *prometheus.Desc
	waitCount, waitSeconds     *prometheus.Desc
	closed                     *prometheus.Desc
}

// NewDBPoolCollector exports the statistics of a database/sql pool (pass
// db.Stats) as shardjob_db_* metrics with the constant label db=name (the
// admin uses "platform"). Gauges: max_open_connections (0: unlimited),
// open_connections, in_use_connections, idle_connections. Counters:
// wait_count_total and wait_duration_seconds_total (requests that waited
// for a free connection, and how long in total), connections_closed_total
// by reason (max_idle, max_idle_time, max_lifetime).
func NewDBPoolCollector(name string, stats func() sql.DBStats) prometheus.Collector {
	d := func(metric, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "db", metric), help, labels, prometheus.Labels{"db": name})
	}
	return &dbPoolCollector{
		stats:       stats,
		maxOpen:     d("max_open_connections", "Maximum number of open connections of the pool (0: unlimited)."),
		open:        d("open_connections", "Connections open, in use or idle."),
		inUse:       d("in_use_connections", "Connections in use."),
		idle:        d("idle_connections", "Idle connections."),
		waitCount:   d("wait_count_total", "Requests for a connection that had to wait for a free one."),
		waitSeconds: d("wait_duration_seconds_total", "Total time spent waiting for a free connection."),
		closed:      d("connections_closed_total", "Connections closed by the pool, by reason: max_idle (SetMaxIdleConns), max_idle_time (SetConnMaxIdleTime), max_lifetime (SetConnMaxLifetime).", "reason"),
	}
}

func (c *dbPoolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.maxOpen, c.open, c.inUse, c.idle, c.waitCount, c.waitSeconds, c.closed} {
		ch <- d
	}
}

func (c *dbPoolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	gauge := func(d *prometheus.Desc, v int) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge(c.maxOpen, s.MaxOpenConnections)
	gauge(c.open, s.OpenConnections)
	gauge(c.inUse, s.InUse)
	gauge(c.idle, s.Idle)
	counter(c.waitCount, float64(s.WaitCount))
	counter(c.waitSeconds, s.WaitDuration.Seconds())
	counter(c.closed, float64(s.MaxIdleClosed), "max_idle")
	counter(c.closed, float64(s.MaxIdleTimeClosed), "max_idle_time")
	counter(c.closed, float64(s.MaxLifetimeClosed), "max_lifetime")
}
