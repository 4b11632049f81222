package metrics

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// partitionCollector exports the firing lag of each scheduling partition
// this replica owns, read at scrape time (Config.PartitionLags).
type partitionCollector struct {
	lags    func(ctx context.Context) (map[int]time.Duration, error)
	timeout time.Duration
	log     *slog.Logger
	lag     *prometheus.Desc
}

func newPartitionCollector(cfg Config) *partitionCollector {
	return &partitionCollector{
		lags: cfg.PartitionLags, timeout: cfg.RefreshTimeout, log: cfg.Logger,
		lag: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "partition_firing_lag_seconds"),
			"How long the earliest due job of a scheduling partition this replica owns has waited to fire (0 while its jobs fire on time), by partition.",
			[]string{"partition"}, nil),
	}
}

func (c *partitionCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.lag }

func (c *partitionCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	lags, err := c.lags(ctx)
	if err != nil {
		c.log.Debug("metrics: cannot read the partitions' firing lag", "err", err)
		return
	}
	for p, lag := range lags {
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, lag.Seconds(), strconv.Itoa(p))
	}
}
