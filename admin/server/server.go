package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/shardjob/shardjob/admin/alarm"
	"github.com/shardjob/shardjob/admin/api"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/coord"
	"github.com/shardjob/shardjob/admin/dispatch"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/internal/loops"
	"github.com/shardjob/shardjob/admin/metrics"
	"github.com/shardjob/shardjob/admin/ownership"
	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/admin/retention"
	"github.com/shardjob/shardjob/admin/runstats"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/utilization"
	"github.com/shardjob/shardjob/admin/watchdog"
	"github.com/shardjob/shardjob/admin/workflowrun"
	"github.com/shardjob/shardjob/admin/xxljob"
	"github.com/shardjob/shardjob/sdk/protocol"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// Config of one admin replica: its own settings (where it listens, its
// database, its coordinator, its secrets) and the configs of its parts.
// Field comments name the command-line flag; the fields are in the order
// of the headings of 'shardjob-admin serve -h' (Cluster, Storage,
// Security, Scheduling, Executors, Alarms and metrics, HTTP).
//
// The parts' configs (Scheduler, Watchdog, Utilization, XXLJob,
// Retention, RunStats) are passed on as they are, with the zero fields
// that this replica shares with them filled by New: their ID, Timing,
// Logger and Clock are this replica's (the scheduler's ID and Timing
// always, so that it marks executors lost after the silence the executor
// endpoints announce), and the scheduler's Observer is the replica's
// metrics.
type Config struct {
	// Cluster.

	// ID names this replica (--id). Default hostname-pid.
	ID string
	// HTTPAddr is the listen address of the API and console (--http-addr).
	// Default 127.0.0.1:8080.
	HTTPAddr string
	// AdvertiseURL is how other processes reach this replica (--advertise-url).
	// Default http://<HTTPAddr>.
	AdvertiseURL string
	// ZKServers are ZooKeeper servers (--zk). Empty means the in-process
	// coordinator (standalone mode: only one replica may run).
	ZKServers []string
	// ZKRoot is the ZooKeeper path of this cluster (--zk-root). Default /shardjob.
	ZKRoot string
	// ZKSessionTimeout (--zk-session-timeout). Default 6s.
	ZKSessionTimeout time.Duration
	// SchedulingPartitions is the installation's number of scheduling
	// partitions (--scheduling-partitions), 1 to partition.MaxCount. Every
	// admin of an installation must use the same: the first one records
	// it in the database, and an admin started with another count refuses
	// to start (store.PartitionCountError). Default partition.DefaultCount
	// (256).
	SchedulingPartitions int

	// Storage.

	// DBDriver is "mysql", "postgres" or "sqlite" (--db-driver). Required.
	DBDriver string
	// DBDSN is the database DSN or SQLite file (--db-dsn). Required.
	DBDSN string
	// Retention sets the horizons of run, alarm and audit history, which
	// the leader deletes in batches (admin/retention, docs/retention.md).
	// Zero: the defaults (runs and alarms 90 days, audit 365 days).
	Retention retention.Config
	// DedupArchive (--dedup-archive) names, per app, the data source of its
	// business database: the admin creates the app's dedup-archive job on
	// its first start with it (retention.EnsureArchiveJobs; never changes an
	// existing one).
	DedupArchive map[string]string

	// Security.

	// ExecutorSecret authenticates executor traffic (--executor-secret or
	// SHARDJOB_EXECUTOR_SECRET). Required, at least 16 characters.
	ExecutorSecret string
	// MetricsToken, when set, is the bearer token GET /metrics requires
	// (--metrics-token or SHARDJOB_METRICS_TOKEN). Default empty: /metrics
	// is open, as Prometheus endpoints conventionally are.
	MetricsToken string
	// InitialPasswordFile, when set, is where the first start also writes
	// the generated password of user "admin" (mode 0600), so that it does
	// not scroll away with the logs; the file is removed at that user's
	// first login or password change, and a later start that finds it says
	// where it is. Default none (serve mode); standalone mode sets
	// DATA_DIR/admin.password.
	InitialPasswordFile string
	// Auth is how people sign in: single sign-on (--sso-config) and
	// password sign-in (--auth-local, --auth-break-glass-user).
	Auth AuthConfig

	// Scheduling.

	// Scheduler tunes the leader loop (admin/scheduler.Config, defaults
	// there): StartBatch is --start-batch, ScheduleCache --schedule-cache,
	// UnplaceableTimeout --unplaceable-timeout, HoldRecheck --hold-recheck,
	// DispatchTimeout --dispatch-timeout, ForgetLostAfter
	// --forget-lost-after.
	Scheduler scheduler.Config
	// Watchdog tunes the missed-fire checker on every replica
	// (admin/watchdog.Config): Grace is --missed-fire-grace (default 30s),
	// BehindLag --audit-behind-lag (default 2m).
	Watchdog watchdog.Config

	// Executors.

	// Timing is the heartbeat timing of this replica's parts (scheduler,
	// executor endpoints, XXL-JOB support), the one the executors are told:
	// Heartbeat is --heartbeat-interval. Zero fields: the defaults of
	// protocol.Timing (2s, lost after 3 heartbeats).
	Timing protocol.Timing
	// XXLJob configures XXL-JOB executor support (admin/xxljob); its
	// TokensFile is --xxljob-tokens, its AllowedHosts
	// --xxljob-allowed-hosts, its ConcurrentApps --xxljob-concurrent-apps.
	XXLJob xxljob.Config

	// Alarms and metrics.

	// AlarmChannelsFile is the JSON file of alarm channels (--alarm-channels;
	// format in docs/alarms.md). Empty: alarms are only shown in the console.
	AlarmChannelsFile string
	// Utilization configures the leader's utilization samples
	// (admin/utilization, docs/metrics.md): its Interval is
	// --sample-interval, how often the leader records each app's executor
	// utilization (online executors, capacity, busy and queued slots).
	// Default 30s, at least 1s; each sample is one INSERT of at most one
	// row per app. Retention.Samples says how long they are kept (default
	// 7 days).
	Utilization utilization.Config
	// RunStats tunes the dashboard's per-minute rollup of runs, which the
	// leader folds (admin/runstats, docs/metrics.md "Dashboard"). Zero: the
	// defaults (each minute folded 15s after it ends, kept 8 days).
	RunStats runstats.Config

	// HTTP.

	// HTTP bounds the HTTP server: trusted proxies, read, write and idle
	// timeouts, connections per client address (--trusted-proxies,
	// --read-timeout, --write-timeout, --idle-timeout, --max-conns-per-ip).
	// Zero fields: the defaults of HTTPConfig.
	HTTP HTTPConfig

	// Out receives the one-time bootstrap credentials. Default os.Stdout.
	Out io.Writer
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
	if c.SchedulingPartitions == 0 {
		c.SchedulingPartitions = partition.DefaultCount
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

// share returns c with the fields its parts share with the replica set
// (see Config): log is the replica's logger.
func (c Config) share(log *slog.Logger) Config {
	// The heartbeat timing the scheduler goes by is the one the executor
	// endpoints announce.
	c.Scheduler.ID, c.Scheduler.Timing = c.ID, c.Timing
	c.Scheduler.Logger, c.Scheduler.Clock = cmp.Or(c.Scheduler.Logger, log), cmp.Or(c.Scheduler.Clock, c.Clock)
	c.Watchdog.ID = cmp.Or(c.Watchdog.ID, c.ID)
	c.Watchdog.Logger, c.Watchdog.Clock = cmp.Or(c.Watchdog.Logger, log), cmp.Or(c.Watchdog.Clock, c.Clock)
	c.XXLJob.Timing = cmp.Or(c.XXLJob.Timing, c.Timing)
	c.XXLJob.Logger, c.XXLJob.Clock = cmp.Or(c.XXLJob.Logger, log), cmp.Or(c.XXLJob.Clock, c.Clock)
	c.Retention.Logger = cmp.Or(c.Retention.Logger, log)
	c.Utilization.Logger = cmp.Or(c.Utilization.Logger, log)
	c.RunStats.Logger, c.RunStats.Clock = cmp.Or(c.RunStats.Logger, log), cmp.Or(c.RunStats.Clock, c.Clock)
	return c
}

func (c Config) validate() error {
	if !slices.Contains(sqlfiles.Dialects, c.DBDriver) {
		return settingErr("db-driver", "%q: must be mysql, postgres or sqlite", c.DBDriver)
	}
	if c.DBDSN == "" {
		return settingErr("db-dsn", "empty: give the MySQL DSN (user:pass@tcp(host:3306)/shardjob), the PostgreSQL URL (postgres://user:pass@host:5432/shardjob) or the SQLite file")
	}
	if c.SchedulingPartitions < 1 || c.SchedulingPartitions > partition.MaxCount {
		return settingErr("scheduling-partitions", "%d: must be 1-%d (default %d); every admin of an installation uses the same",
			c.SchedulingPartitions, partition.MaxCount, partition.DefaultCount)
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
	owner *ownership.Keeper // the scheduling partitions this replica owns: it fires their jobs
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
	cfg = cfg.share(log)
	st, err := store.Open(ctx, store.Config{Driver: cfg.DBDriver, DSN: cfg.DBDSN, Replica: cfg.ID, PartitionCount: cfg.SchedulingPartitions})
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
	if err := st.AgreePartitionCount(ctx); err != nil {
		return nil, &SettingError{Setting: "scheduling-partitions", Err: err}
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
			Features: []string{ownership.FeatureFireByPartition},
		})
		if err != nil {
			return nil, &SettingError{Setting: "zk", Err: err}
		}
		s.elect, s.close = zk, zk.Close
	} else {
		local := coord.NewLocal(coord.LocalConfig{
			ID: cfg.ID, Address: cfg.AdvertiseURL, Features: []string{ownership.FeatureFireByPartition},
			BaseEpoch: func() (int64, error) {
				rec, err := st.Leader(context.Background())
				return rec.Epoch, err
			},
		})
		s.elect, s.close = local, local.Close
	}
	board, _ := s.elect.(coord.Board) // both electors are boards
	if s.owner, err = ownership.New(ownership.Config{ID: cfg.ID, Count: cfg.SchedulingPartitions, Board: board, Store: st, Logger: log,
		Require: ownership.FeatureFireByPartition}); err != nil {
		_ = s.close()
		return nil, err
	}
	push, err := dispatch.New(cfg.ExecutorSecret, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if s.xxl, err = xxljob.New(cfg.XXLJob, st); err != nil {
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
		Partitions: func() int { owned, _ := s.owner.Owned(); return len(owned) },
		PartitionLags: func(ctx context.Context) (map[int]time.Duration, error) {
			return partitionLags(ctx, st, s.owner, cfg.Clock.Now())
		},
	})
	if err != nil {
		return nil, err
	}
	cfg.Scheduler.Observer = s.mets
	cfg.Scheduler.Partitions = s.owner // every replica fires its partitions' jobs
	if s.sched, err = scheduler.New(cfg.Scheduler, st, router); err != nil {
		return nil, err
	}
	if s.watch, err = watchdog.New(cfg.Watchdog, st); err != nil {
		return nil, err
	}
	if s.keep, err = retention.New(cfg.Retention, st); err != nil {
		return nil, err
	}
	if s.flows, err = workflowrun.New(workflowrun.Config{Scheduler: s.sched, Observer: s.mets, Clock: cfg.Clock, Logger: log}, st); err != nil {
		return nil, err
	}
	if s.util, err = utilization.New(cfg.Utilization, st); err != nil {
		return nil, &SettingError{Setting: "sample-interval", Err: err}
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
	directories, err := cfg.Auth.directories(cfg.ExecutorSecret, log)
	if err != nil {
		return nil, err
	}
	if err := auditSSOSettings(ctx, st, cfg.Auth, directories, cfg.ID); err != nil {
		return nil, fmt.Errorf("audit the sign-in settings: %w", err)
	}
	handler, err := api.New(api.Config{
		SSO: directories, NoPasswordSignIn: cfg.Auth.NoPasswordSignIn, BreakGlassUser: cfg.Auth.BreakGlassUser,
		Store: st, ExecutorSecret: cfg.ExecutorSecret, Nonces: nonces, Members: s.elect, Scheduler: s.sched, Workflows: s.flows, Canceller: router, AlarmChannels: alarmChannels, XXLJob: s.xxl,
		Timing: cfg.Timing, SampleInterval: s.util.Interval(), TrustedProxies: cfg.HTTP.TrustedProxies, ManualRunsPerMinute: cfg.HTTP.ManualRunsPerMinute,
		InitialPasswordFile: cfg.InitialPasswordFile, Logger: log, Clock: cfg.Clock,
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

// partitionLags is the firing lag of each partition owner owns: how far
// in the past its earliest next firing is (store.PartitionsNextDue).
func partitionLags(ctx context.Context, st *store.Store, owner *ownership.Keeper, now time.Time) (map[int]time.Duration, error) {
	owned, _ := owner.Owned()
	if len(owned) == 0 {
		return nil, nil
	}
	due, err := st.PartitionsNextDue(ctx)
	if err != nil {
		return nil, err
	}
	lags := make(map[int]time.Duration, len(owned))
	for p := range owned {
		lags[p] = 0
	}
	for _, d := range due {
		if _, ok := owned[d.Partition]; ok && d.NextDue.Valid {
			lags[d.Partition] = max(now.Sub(time.UnixMilli(d.NextDue.Int64)), 0)
		}
	}
	return lags, nil
}

// Serve runs the HTTP server and the background loops of the replica —
// the missed-fire watchdog, alarm delivery, the XXL-JOB prober and the
// leader election, whose terms run the leader's duties (term) — until ctx
// ends or one of them fails, then shuts everything down in order and
// returns that failure, or nil. Every loop has one start/stop contract
// (admin/internal/loops): nothing it started runs once Serve returns.
func (s *Server) Serve(ctx context.Context) error {
	web := loops.Start(ctx, loops.Func(s.serveHTTP))
	bg := []loops.Loop{loops.Quiet(s.watch.Run), loops.Quiet(s.xxl.Run), loops.Func(s.lead), loops.Func(s.owner.Run), loops.Quiet(s.sched.FireOwned)}
	if s.alarm != nil {
		bg = append(bg, loops.Quiet(s.alarm.Run))
	}
	replica := loops.Start(ctx, bg...)
	s.log.Info("admin serving", "url", s.cfg.AdvertiseURL)
	var err error
	select {
	case <-ctx.Done():
	case <-web.Failed():
		err = web.Err()
	case <-replica.Failed():
		err = replica.Err()
	}
	if err != nil {
		s.log.Error("admin stopping", "err", err)
	}
	_ = web.Stop() // stop taking requests first (a graceful shutdown)
	replica.Cancel()
	_ = s.close() // the elector
	_ = replica.Wait()
	s.xxl.Close()
	_ = s.st.Close()
	return err
}

// serveHTTP serves the API, the console and the executor endpoints until
// ctx ends, then shuts the HTTP server down gracefully (at most 10s).
func (s *Server) serveHTTP(ctx context.Context) error {
	served := make(chan error, 1)
	go func() { served <- s.http.Serve(s.ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served: // failed: still shut down (open connections)
		served <- err // read again below
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = s.http.Shutdown(shutdownCtx)
	if err = <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	return nil
}

// lead takes part in the leader election until ctx ends; each term won
// runs term.
func (s *Server) lead(ctx context.Context) error {
	if err := s.elect.Lead(ctx, s.term); err != nil && ctx.Err() == nil {
		return fmt.Errorf("leader election: %w", err)
	}
	return nil
}

// term is one leadership term: the scheduler's leader loop, and beside it
// for as long as it runs the leader's other duties (workflow engine, run
// statistics, utilization samples, retention), stopped before term
// returns.
func (s *Server) term(ctx context.Context, epoch int64) {
	duties := loops.Start(ctx,
		loops.Quiet(s.keep.Run), loops.Quiet(s.util.Run), loops.Quiet(s.stats.Run),
		loops.Quiet(func(ctx context.Context) { s.flows.Lead(ctx, epoch) }),
		loops.Quiet(func(ctx context.Context) {
			if err := s.owner.Rebalance(ctx, epoch); err != nil && ctx.Err() == nil {
				s.log.Info("partition assignment: this term no longer publishes", "epoch", epoch, "err", err)
			}
		}),
	)
	defer func() { _ = duties.Stop() }()
	defer s.mets.LeaderTerm(epoch)()
	s.sched.Lead(ctx, epoch)
}
