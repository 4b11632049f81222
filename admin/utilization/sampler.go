// Package utilization records how busy each app's executors are over time,
// so that an operator can see that an app was saturated for the last hour
// (docs/metrics.md, "Utilization").
//
// The leader runs a Sampler for as long as it leads (Sampler.Run, one of the
// term's duties in admin/server, started and stopped by
// admin/internal/loops, as retention is): at the start of the term and
// then every Interval it writes one row per app that has executors to
// utilization_sample, in one INSERT … SELECT stamped with the database
// clock (store.SampleUtilization): online executors, their capacity, busy
// slots and queued slots. A term that ends stops the loop before the term
// returns; a new leader starts its own, so at most one admin samples at a
// time (two for a moment at a hand-over, which only adds a row).
//
// Retention deletes samples past their horizon (retention.Config.Samples,
// default 7 days); GET /api/v1/stats/utilization reads them downsampled.
package utilization

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/shardjob/shardjob/admin/store"
)

// Defaults and bounds of Config.
const (
	DefaultInterval = 30 * time.Second
	MinInterval     = time.Second
)

// Config configures a Sampler. Zero fields mean "the default".
type Config struct {
	// Interval between two samples (server.Config.Utilization.Interval,
	// --sample-interval). Default 30s, at least 1s. Each sample costs one
	// INSERT of at most one row per app.
	Interval time.Duration
	// OnSample, if set, is called after every sample with the rows written
	// (tests, metrics).
	OnSample func(rows int64, err error)
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c Config) validate() error {
	if c.Interval < MinInterval {
		return fmt.Errorf("utilization: sample interval %s: use at least %s (default %s)", c.Interval, MinInterval, DefaultInterval)
	}
	return nil
}

// Sampler records utilization samples while its admin leads.
type Sampler struct {
	cfg Config
	st  *store.Store
}

// New checks cfg.
func New(cfg Config, st *store.Store) (*Sampler, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Sampler{cfg: cfg, st: st}, nil
}

// Interval is the time between two samples.
func (s *Sampler) Interval() time.Duration { return s.cfg.Interval }

// Run records a sample at once, then every Interval, until ctx ends. A
// failed sample is logged and the next one comes at the next interval (a
// gap in the chart, nothing else).
func (s *Sampler) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		n, err := s.st.SampleUtilization(ctx, 0)
		if err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("utilization sample failed; next one at the next interval", "err", err)
		}
		if s.cfg.OnSample != nil && ctx.Err() == nil {
			s.cfg.OnSample(n, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
