package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/shardjob/shardjob/admin/alarm"
	"github.com/shardjob/shardjob/admin/api"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/coord"
	"github.com/shardjob/shardjob/admin/dispatch"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/metrics"
	"github.com/shardjob/shardjob/admin/retention"
	"github.com/shardjob/shardjob/admin/runstats"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/utilization"
	"github.com/shardjob/shardjob/admin/watchdog"
	"github.com/shardjob/shardjob/admin/workflowrun"
	"github.com/shardjob/shardjob/admin/xxljob"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Config of one admin replica. Field comments name the command-line flag.
type Config struct {
	// ID names this replica (--id). Default hostname-pid.
	ID string
	// HTTPAddr is the listen address of the API and console (--http-addr).
	// Default 127.0.0.1:8080.
	HTTPAddr string
	// AdvertiseURL is how other processes reach this replica (--advertise-url).
	// Default http://<HTTPAddr>.
	AdvertiseURL string
	// DBDriver is "mysql" or "sqlite" (--db-driver). Required.
	DBDriver string
	// DBDSN is the database DSN or SQLite file (--db-dsn). Required.
	DBDSN string
	// ZKServers are ZooKeeper servers (--zk). Empty means the in-process
	// coordinator (standalone mode: only one replica may run).
	ZKServers []string
	// ZKRoot is the ZooKeeper path of this cluster (--zk-root). Default /shardjob.
	ZKRoot string
	// ZKSessionTimeout (--zk-session-timeout). Default 6s.
	ZKSessionTimeout time.Duration
	// ExecutorSecret authenticates executor traffic (--executor-secret or
	// SHARDJOB_EXECUTOR_SECRET). Required, at least 16 characters.
	ExecutorSecret string
	// Timing is the heartbeat timing of this replica's parts (scheduler,
	// executor endpoints, XXL-JOB support), the one the executors are told:
	// Heartbeat is --heartbeat-interval. Zero fields: the defaults of
	// protocol.Timing (2s, lost after 3 heartbeats).
	Timing protocol.Timing
	// PollInterval of the leader loop. Default 200ms.
	PollInterval time.Duration
	// StartBatch is how many pending runs the leader starts per transaction
	// (--start-batch). Default 500; 1 is the per-run path.
	StartBatch int
	// ScheduleCache (--schedule-cache) bounds the leader's cache of parsed
	// schedules (one per job; scheduler.Config.ScheduleCache). Default
	// 100,000.
	ScheduleCache int
	// UnplaceableTimeout (--unplaceable-timeout): how long a run may wait for
	// an executor with its handler before it fails. Default 10m.
	UnplaceableTimeout time.Duration
	// HoldRecheck (--hold-recheck): how often the leader checks again a
	// run it holds (waits not met, a backfill's turn). Default 5s.
	HoldRecheck time.Duration
	// DispatchTimeout (--dispatch-timeout): how long an executor may leave
	// an attempt unacknowledged before it fails. Default 30s.
	DispatchTimeout time.Duration
	// ForgetLostAfter (--forget-lost-after): how long a lost executor may
	// stay silent before the leader marks it gone (hidden from the
	// executor list by default). Default 1h.
	ForgetLostAfter time.Duration
	// MissedFireGrace is how late a firing may be before the watchdog on
	// every replica raises a missed-fire alarm (--missed-fire-grace). Default 30s.
	MissedFireGrace time.Duration
	// AuditBehindLag is how far the watchdog's gap audit may fall behind
	// before a watchdog_behind alarm (--audit-behind-lag). Default 2m.
	AuditBehindLag time.Duration
	// AlarmChannelsFile is the JSON file of alarm channels (--alarm-channels;
	// format in docs/alarms.md). Empty: alarms are only shown in the console.
	AlarmChannelsFile string
	// XXLJob configures XXL-JOB executor support (admin/xxljob); its
	// TokensFile is --xxljob-tokens, its AllowedHosts
	// --xxljob-allowed-hosts. Timing, Logger and Clock default to this
	// replica's.
	XXLJob xxljob.Config
	// MetricsToken, when set, is the bearer token GET /metrics requires
	// (--metrics-token or SHARDJOB_METRICS_TOKEN). Default empty: /metrics
	// is open, as Prometheus endpoints conventionally are.
	MetricsToken string
	// Retention sets the horizons of run, alarm and audit history, which
	// the leader deletes in batches (admin/retention, docs/retention.md).
	// Zero: the defaults (runs and alarms 90 days, audit 365 days).
	Retention retention.Config
	// SampleInterval (--sample-interval) is how often the leader records
	// each app's executor utilization (online executors, capacity, busy
	// and queued slots: admin/utilization, docs/metrics.md). Default 30s,
	// at least 1s; each sample is one INSERT of at most one row per app.
	// Retention.Samples says how long they are kept (default 7 days).
	SampleInterval time.Duration
	// RunStats tunes the dashboard's per-minute rollup of runs, which the
	// leader folds (admin/runstats, docs/metrics.md "Dashboard"). Zero: the
	// defaults (each minute folded 15s after it ends, kept 8 days). Its
	// Clock and Logger default to this Config's.
	RunStats runstats.Config
	// DedupArchive (--dedup-archive) names, per app, the data source of its
	// business database: the admin creates the app's dedup-archive job on
	// its first start with it (retention.EnsureArchiveJobs; never changes an
	// existing one).
	DedupArchive map[string]string
	// HTTP bounds the HTTP server: trusted proxies, read, write and idle
	// timeouts, connections per client address (--trusted-proxies,
	// --read-timeout, --write-timeout, --idle-timeout, --max-conns-per-ip).
	// Zero fields: the defaults of HTTPConfig.
	HTTP HTTPConfig
	// Out receives the one-time bootstrap credentials. Default os.Stdout.
	Out io.Writer
	// InitialPasswordFile, when set, is where the first start also writes
	// the generated password of user "admin" (mode 0600), so that it does
	// not scroll away with the logs; the file is removed at that user's
	// first login or password change, and a later start that finds it says
	// where it is. Default none (serve mode); standalone mode sets
	// DATA_DIR/admin.password.
	InitialPasswordFile string
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Clock is the one local clock of every part of the replica (scheduler,
	// watchdog, alarms, API, metrics); what other processes compare is
	// taken from the database clock instead (docs/architecture.md,
	// "Clocks"). Default clock.System.
	Clock clock.Clock
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.ID == "" {
		host, _ := os.Hostname()
		c.ID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if c.HTTPAddr == "" {
		c.HTTPAddr = "127.0.0.1:8080"
	}
	if c.ZKRoot == "" {
		c.ZKRoot = "/shardjob"
	}
	if c.ZKSessionTimeout <= 0 {
		c.ZKSessionTimeout = 6 * time.Second
	}
	c.Timing = c.Timing.WithDefaults()
	c.HTTP = c.HTTP.WithDefaults()
	if c.Out == nil {
		c.Out = os.Stdout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = clock.System
	}
	return c
}

func (c Config) validate() error {
	if c.DBDriver != "mysql" && c.DBDriver != "sqlite" {
		return settingErr("db-driver", "%q: must be mysql or sqlite", c.DBDriver)
	}
	if c.DBDSN == "" {
		return settingErr("db-dsn", "empty: give the MySQL DSN (user:pass@tcp(host:3306)/shardjob) or the SQLite file")
	}
	if err := protocol.ValidateSecret(c.ExecutorSecret); err != nil {
		return settingErr("executor-secret", "%w; generate one with 'openssl rand -hex 32'", err)
	}
	return c.HTTP.validate()
}

// Server is a running admin replica.
type Server struct {
	cfg   Config
	st    *store.Store
	elect coord.Elector
	sched *scheduler.Scheduler
	watch *watchdog.Watchdog
	keep  *retention.Retainer
	util  *utilization.Sampler
	stats *runstats.Aggregator
	flows *workflowrun.Engine
	alarm *alarm.Notifier // nil without --alarm-channels
	xxl   *xxljob.Service
	mets  *metrics.Metrics
	ln    net.Listener
	http  *http.Server
	log   *slog.Logger
	close func() error
}

// New opens the database, migrates it, bootstraps the first user, binds the
// listener and prepares the elector. It does not start leading or serving:
// call Serve.
func New(ctx context.Context, cfg Config) (_ *Server, err error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger.With("admin", cfg.ID)
	st, err := store.Open(ctx, store.Config{Driver: cfg.DBDriver, DSN: cfg.DBDSN, Replica: cfg.ID})
	if err != nil {
		return nil, &SettingError{Setting: "db-dsn", Err: err}
	}
	defer func() {
		if err != nil {
			_ = st.Close()
		}
	}()
	n, err := st.Migrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate database: %w", err)
	}
	if n > 0 {
		log.Info("database migrated", "applied", n)
	}
	pw, err := auth.Bootstrap(ctx, st)
	if err != nil {
		return nil, err
	}
	if err := announcePassword(cfg.Out, pw, cfg.InitialPasswordFile); err != nil {
		return nil, err
	}
	if created, err := retention.EnsureArchiveJobs(ctx, st, cfg.DedupArchive); err != nil {
		return nil, &SettingError{Setting: "dedup-archive", Err: err}
	} else if len(created) > 0 {
		log.Info("created dedup archive jobs", "apps", created)
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, settingErr("http-addr", "%s: %w", cfg.HTTPAddr, unwrapOp(err))
	}
	defer func() {
		if err != nil {
			_ = ln.Close()
		}
	}()
	if cfg.AdvertiseURL == "" {
		cfg.AdvertiseURL = "http://" + ln.Addr().String()
	}
	ln = newConnLimiter(ln, cfg.HTTP.MaxConnsPerIP, cfg.HTTP.TrustedProxies, log)
	s := &Server{cfg: cfg, st: st, ln: ln, log: log}
	if len(cfg.ZKServers) > 0 {
		zk, err := coord.NewZK(coord.ZKConfig{
			Servers: cfg.ZKServers, Root: cfg.ZKRoot, ID: cfg.ID, Address: cfg.AdvertiseURL,
			SessionTimeout: cfg.ZKSessionTimeout, Logger: log,
		})
		if err != nil {
			return nil, &SettingError{Setting: "zk", Err: err}
		}
		s.elect, s.close = zk, zk.Close
	} else {
		local := coord.NewLocal(coord.LocalConfig{
			ID: cfg.ID, Address: cfg.AdvertiseURL,
			BaseEpoch: func() (int64, error) {
				rec, err := st.Leader(context.Background())
				return rec.Epoch, err
			},
		})
		s.elect, s.close = local, local.Close
	}
	push, err := dispatch.New(cfg.ExecutorSecret, 5*time.Second)
	if err != nil {
		return nil, err
	}
	xcfg := cfg.XXLJob
	if xcfg.Timing == (protocol.Timing{}) {
		xcfg.Timing = cfg.Timing
	}
	if xcfg.Logger == nil {
		xcfg.Logger = log
	}
	if xcfg.Clock == nil {
		xcfg.Clock = cfg.Clock
	}
	if s.xxl, err = xxljob.New(xcfg, st); err != nil {
		return nil, err
	}
	if n := s.xxl.Apps(); n > 0 {
		log.Info("XXL-JOB executor support", "apps", n, "allowed_hosts", s.xxl.AllowedHosts())
	}
	router := s.xxl.Router(push) // XXL-JOB executors get run calls, the others signed pushes
	var zkProbe func(context.Context) error
	if len(cfg.ZKServers) > 0 {
		zkProbe = func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			_, err := s.elect.Members(ctx)
			return err
		}
	}
	s.mets, err = metrics.New(metrics.Config{
		Scheduler: metrics.StatsFunc(func() scheduler.Stats { return s.sched.Stats() }),
		DB:        st.SQLDB(), Coordinator: zkProbe, Logger: log, Clock: cfg.Clock,
	})
	if err != nil {
		return nil, err
	}
	s.sched, err = scheduler.New(scheduler.Config{
		ID: cfg.ID, Timing: cfg.Timing, PollInterval: cfg.PollInterval, StartBatch: cfg.StartBatch, UnplaceableTimeout: cfg.UnplaceableTimeout, HoldRecheck: cfg.HoldRecheck, DispatchTimeout: cfg.DispatchTimeout, Logger: log,
		ForgetLostAfter: cfg.ForgetLostAfter, ScheduleCache: cfg.ScheduleCache, Observer: s.mets, Clock: cfg.Clock,
	}, st, router)
	if err != nil {
		return nil, err
	}
	s.watch, err = watchdog.New(watchdog.Config{ID: cfg.ID, Grace: cfg.MissedFireGrace, BehindLag: cfg.AuditBehindLag, Logger: log, Clock: cfg.Clock}, st)
	if err != nil {
		return nil, err
	}
	if cfg.Retention.Logger == nil {
		cfg.Retention.Logger = log
	}
	if s.keep, err = retention.New(cfg.Retention, st); err != nil {
		return nil, err
	}
	if s.flows, err = workflowrun.New(workflowrun.Config{Scheduler: s.sched, Observer: s.mets, Clock: cfg.Clock, Logger: log}, st); err != nil {
		return nil, err
	}
	if s.util, err = utilization.New(utilization.Config{Interval: cfg.SampleInterval, Logger: log}, st); err != nil {
		return nil, &SettingError{Setting: "sample-interval", Err: err}
	}
	if cfg.RunStats.Clock == nil {
		cfg.RunStats.Clock = cfg.Clock
	}
	if cfg.RunStats.Logger == nil {
		cfg.RunStats.Logger = log
	}
	if s.stats, err = runstats.New(cfg.RunStats, st); err != nil {
		return nil, err
	}
	var alarmChannels api.AlarmChannels
	if cfg.AlarmChannelsFile != "" {
		acfg := alarm.Config{ID: cfg.ID, Logger: log, Clock: cfg.Clock}
		if err := alarm.LoadFile(cfg.AlarmChannelsFile, &acfg); err != nil {
			return nil, &SettingError{Setting: "alarm-channels", Err: err}
		}
		if s.alarm, err = alarm.New(acfg, st); err != nil {
			return nil, settingErr("alarm-channels", "%s: %w", cfg.AlarmChannelsFile, err)
		}
		alarmChannels = s.alarm
	}
	var nonces protocol.NonceStore // one replica: its memory is enough
	if len(cfg.ZKServers) > 0 {
		// Several replicas: a request one of them accepted is a replay for
		// all (docs/security.md).
		nonces = store.NewNonces(st, log, nil)
	}
	handler, err := api.New(api.Config{
		Store: st, ExecutorSecret: cfg.ExecutorSecret, Nonces: nonces, Members: s.elect, Scheduler: s.sched, Workflows: s.flows, Canceller: router, AlarmChannels: alarmChannels, XXLJob: s.xxl,
		Timing: cfg.Timing, SampleInterval: s.util.Interval(), TrustedProxies: cfg.HTTP.TrustedProxies, InitialPasswordFile: cfg.InitialPasswordFile, Logger: log, Clock: cfg.Clock,
		Metrics: s.mets.Handler(cfg.MetricsToken), Observe: s.mets.Middleware(), Results: results{s.mets, s.flows}, Coordinator: zkProbe,
	})
	if err != nil {
		return nil, err
	}
	s.http = cfg.HTTP.httpServer(handler, log)
	return s, nil
}

// results hands every accepted slot result to the metrics and to the
// workflow engine (a node's job run may have ended: it passes at once).
type results []api.ResultObserver

func (r results) SlotResult(o store.SlotOutcome) {
	for _, x := range r {
		x.SlotResult(o)
	}
}

func unwrapOp(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}

// URL is the base URL of this replica.
func (s *Server) URL() string { return s.cfg.AdvertiseURL }

// Store exposes the database (standalone mode seeds the demo job with it).
func (s *Server) Store() *store.Store { return s.st }

// Scheduler exposes the leader loop (for Wake and Stats).
func (s *Server) Scheduler() *scheduler.Scheduler { return s.sched }

// XXLJob exposes XXL-JOB executor support (for its Stats).
func (s *Server) XXLJob() *xxljob.Service { return s.xxl }

// Serve runs the HTTP server and the election until ctx ends, then shuts
// everything down and returns.
func (s *Server) Serve(ctx context.Context) error {
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := s.http.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("http server: %w", err)
		}
	}()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.watch.Run(watchCtx)
	}()
	if s.alarm != nil {
		wg.Go(func() { s.alarm.Run(watchCtx) })
	}
	wg.Go(func() { s.xxl.Run(watchCtx) }) // probes XXL-JOB executors
	leadCtx, stopLead := context.WithCancel(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := s.elect.Lead(leadCtx, s.keep.WhileLeading(s.util.WhileLeading(s.stats.WhileLeading(s.flows.WhileLeading(func(ctx context.Context, epoch int64) {
			defer s.mets.LeaderTerm(epoch)()
			s.sched.Lead(ctx, epoch)
		})))))
		if err != nil && leadCtx.Err() == nil {
			errc <- fmt.Errorf("leader election: %w", err)
		}
	}()
	s.log.Info("admin serving", "url", s.cfg.AdvertiseURL)
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		s.log.Error("admin stopping", "err", err)
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = s.http.Shutdown(shutdownCtx)
	stopLead()
	stopWatch()
	_ = s.close()
	wg.Wait()
	s.xxl.Close()
	_ = s.st.Close()
	return err
}
