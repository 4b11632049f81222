// Command shardjob-admin runs the shardjob admin.
//
//	shardjob-admin standalone [--data-dir ./data] [--http-addr 127.0.0.1:8080]
//	shardjob-admin serve --db-driver mysql --db-dsn DSN --zk host:2181 --executor-secret S
//	shardjob-admin migrate --db-driver mysql --db-dsn DSN
//	shardjob-admin migrate --db-driver postgres --db-dsn postgres://user:pw@host:5432/db
//	shardjob-admin copy --from mysql://user:pw@tcp(host:3306)/db --to postgres://user:pw@host:5432/db
//	shardjob-admin version
//
// Every flag can also be set with an environment variable (--db-dsn is
// SHARDJOB_DB_DSN, and so on) and by a "db-dsn = …" line of the file named
// by --config (sdk/cliflags: the command line wins, then the file,
// then the environment). Errors are printed on one line naming the
// setting, and the exit status is 1 (2 for usage errors).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/admin/retention"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/server"
	"github.com/shardjob/shardjob/admin/standalone"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/utilization"
	"github.com/shardjob/shardjob/admin/watchdog"
	"github.com/shardjob/shardjob/admin/xxljob"
	"github.com/shardjob/shardjob/sdk/cliflags"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: shardjob-admin <command> [flags]

commands:
  standalone   admin + embedded SQLite + in-process coordinator + demo executor
  serve        production admin against MySQL/MariaDB or PostgreSQL, and ZooKeeper
  migrate      apply the database migrations and exit
  copy         copy an installation into a new database (MySQL, PostgreSQL or SQLite)
  repartition  change the number of scheduling partitions (every admin stopped)
  version      print the version

run 'shardjob-admin <command> -h' for the flags of a command.
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "standalone":
		err = cmdStandalone(ctx, args[1:], stdout, stderr)
	case "serve":
		err = cmdServe(ctx, args[1:], stdout, stderr)
	case "migrate":
		err = cmdMigrate(ctx, args[1:], stdout, stderr)
	case "copy":
		err = cmdCopy(ctx, args[1:], stdout, stderr)
	case "repartition":
		err = cmdRepartition(ctx, args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "shardjob-admin", Version)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "shardjob-admin: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if errors.Is(err, cliflags.ErrUsage) {
		if msg := cliflags.Unprinted(err); msg != "" {
			fmt.Fprintf(stderr, "shardjob-admin: %s\n", oneLine(msg))
		}
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "shardjob-admin: %s\n", oneLine(explain(err)))
		return 1
	}
	return 0
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// explain is the message of an error that stops the admin, naming a bad
// setting (server.SettingError) as the operator gives it: its flag and its
// environment variable.
func explain(err error) string {
	var se *server.SettingError
	if errors.As(err, &se) {
		return "--" + se.Setting + " (or " + cliflags.EnvName(se.Setting) + "): " + se.Err.Error()
	}
	return err.Error()
}

// httpFlags defines the flags of the HTTP server, the same in serve and
// standalone; the returned function gives their values after parsing.
func httpFlags(f *cliflags.Set) func() (server.HTTPConfig, error) {
	proxies := f.Str("trusted-proxies", "", "IP addresses and CIDR ranges of load balancers and proxies whose X-Forwarded-For names the client, comma separated, e.g. 10.0.0.0/8 (default none: the client address is the TCP peer's; set it behind a load balancer)")
	read := f.Dur("read-timeout", server.DefaultReadTimeout, "the most a request may take to arrive, headers and body")
	write := f.Dur("write-timeout", server.DefaultWriteTimeout, "the most a request may take from the end of its headers to the end of its answer (longer than --read-timeout)")
	idle := f.Dur("idle-timeout", server.DefaultIdleTimeout, "how long a keep-alive connection may wait for its next request")
	maxConns := f.Num("max-conns-per-ip", server.DefaultMaxConnsPerIP, "open connections one client address may hold (trusted proxies are not capped)")
	manualRuns := f.Num("manual-runs-per-minute", server.DefaultManualRunsPerMinute, "requests that start runs by hand (trigger, backfill, retry, rerun) one user or API key may make per minute; one more is answered 429")
	return func() (server.HTTPConfig, error) {
		p, err := server.ParseTrustedProxies(*proxies)
		if err != nil {
			return server.HTTPConfig{}, fmt.Errorf("--trusted-proxies (or SHARDJOB_TRUSTED_PROXIES): %w", err)
		}
		return server.HTTPConfig{TrustedProxies: p, ReadTimeout: *read, WriteTimeout: *write, IdleTimeout: *idle, MaxConnsPerIP: *maxConns,
			ManualRunsPerMinute: *manualRuns}, nil
	}
}

// authFlags defines how people sign in, the same in serve and standalone.
func authFlags(f *cliflags.Set) func() server.AuthConfig {
	file := f.Str("sso-config", "", "YAML file of single sign-on: an OIDC provider and/or an LDAP / Active Directory server, and the mapping of their groups to roles and apps (docs/security.md, Single sign-on); empty: local users only")
	local := f.Flag("auth-local", true, "let local users sign in with a password; false: only directory users and the --auth-break-glass-user")
	breakGlass := f.Str("auth-break-glass-user", "", "the local user who may still sign in with a password when --auth-local=false (an admin kept for when the directory is down)")
	return func() server.AuthConfig {
		return server.AuthConfig{SSOConfigFile: *file, NoPasswordSignIn: !*local, BreakGlassUser: *breakGlass}
	}
}

// xxljobFlags defines the flags of XXL-JOB executor support, the same in
// serve and standalone; the returned function gives the config after parsing.
func xxljobFlags(f *cliflags.Set) func() xxljob.Config {
	tokens := f.Str("xxljob-tokens", "", "JSON file {\"app\": \"token\"} of XXL-JOB access tokens: apps whose unchanged XXL-JOB executors may register (docs/migration.md); empty: none may")
	hosts := f.Str("xxljob-allowed-hosts", strings.Join(xxljob.DefaultAllowedHosts, ","), "where XXL-JOB executors may be, comma separated: CIDRs, IP addresses, host names; a registration of another address is refused and the admin calls no other (docs/security.md)")
	concurrent := f.Str("xxljob-concurrent-apps", "", "apps whose XXL-JOB executors may run several slots of one handler at a time (XXL-JOB's Java executor), comma separated; the executors of other apps get one slot per handler at a time, as xxl-job-executor-go needs (docs/migration.md)")
	return func() xxljob.Config {
		var apps []string
		if *concurrent != "" {
			apps = strings.Split(*concurrent, ",")
		}
		return xxljob.Config{TokensFile: *tokens, AllowedHosts: strings.Split(*hosts, ","), ConcurrentApps: apps}
	}
}

// forgetFlag defines --forget-lost-after, the same in serve and standalone;
// the returned function gives its checked value after parsing.
func forgetFlag(f *cliflags.Set) func() (time.Duration, error) {
	d := f.Dur("forget-lost-after", time.Hour, "how long a lost executor (shardjob or XXL-JOB) may stay silent before it is marked gone and no longer listed by default (its row stays; a heartbeat or a registration brings it back)")
	return func() (time.Duration, error) {
		if *d < time.Minute {
			return 0, fmt.Errorf("--forget-lost-after %s: use at least 1m (default 1h)", *d)
		}
		return *d, nil
	}
}

// sampleFlag is --sample-interval of serve and standalone.
func sampleFlag(f *cliflags.Set) func() (time.Duration, error) {
	d := f.Dur("sample-interval", utilization.DefaultInterval, "how often the leader records each app's executor utilization (online executors, capacity, busy and queued slots) for the dashboard's chart and GET /api/v1/stats/utilization; one INSERT of at most one row per app each time, kept 7 days (docs/metrics.md)")
	return func() (time.Duration, error) {
		if *d < utilization.MinInterval {
			return 0, fmt.Errorf("--sample-interval %s: use at least %s (default %s)", *d, utilization.MinInterval, utilization.DefaultInterval)
		}
		return *d, nil
	}
}

// deadFlag is --dead-retention of serve and standalone.
func deadFlag(f *cliflags.Set) func() (time.Duration, error) {
	d := f.Dur("dead-retention", retention.DefaultDead, "how long a dead letter (a slot that failed permanently or used up its retries, GET /api/v1/dead) is kept after it died, whatever becomes of its run; the leader deletes older ones in batches (docs/failures.md)")
	return func() (time.Duration, error) {
		if *d < retention.MinHorizon {
			return 0, fmt.Errorf("--dead-retention %s: use at least %s (default %s)", *d, retention.MinHorizon, retention.DefaultDead)
		}
		return *d, nil
	}
}

func cmdStandalone(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := cliflags.New("standalone", stderr)
	f.Group("Cluster")
	addr := f.Str("http-addr", "127.0.0.1:8080", "listen address of the console and API")
	f.Group("Storage")
	dataDir := f.Str("data-dir", "data", "directory of the SQLite database and the executor secret")
	deadRetention := deadFlag(f)
	f.Group("Executors")
	noDemo := f.Flag("no-demo", false, "do not start the demo executor and demo job")
	f.Group("Security")
	authConfig := authFlags(f)
	forgetLost := forgetFlag(f)
	xxlConfig := xxljobFlags(f)
	f.Group("Alarms and metrics")
	sampleInterval := sampleFlag(f)
	f.Group("HTTP")
	httpConfig := httpFlags(f)
	f.Group("Logging")
	logFormat := f.Str("log-format", "text", "text or json")
	logLevel := f.Str("log-level", "info", "debug, info, warn or error")
	if err := f.Parse(args); err != nil {
		return err
	}
	dead, err := deadRetention()
	if err != nil {
		return err
	}
	forget, err := forgetLost()
	if err != nil {
		return err
	}
	sample, err := sampleInterval()
	if err != nil {
		return err
	}
	httpCfg, err := httpConfig()
	if err != nil {
		return err
	}
	log, err := cliflags.NewLogger(stderr, *logFormat, *logLevel)
	if err != nil {
		return err
	}
	return standalone.Run(ctx, standalone.Config{
		DataDir: *dataDir, HTTPAddr: *addr, HTTP: httpCfg, Auth: authConfig(), NoDemo: *noDemo, XXLJob: xxlConfig(), ForgetLostAfter: forget, SampleInterval: sample, DeadRetention: dead, Out: stdout, Logger: log,
		Ready: func(url string) {
			fmt.Fprintf(stdout, "shardjob: standalone mode ready: console %s (data in %s)\n", url, *dataDir)
		},
	})
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := cliflags.New("serve", stderr)
	f.Group("Cluster")
	id := f.Str("id", "", "replica id (default hostname-pid)")
	addr := f.Str("http-addr", "127.0.0.1:8080", "listen address of the API, console and executor endpoints")
	adv := f.Str("advertise-url", "", "URL other processes reach this replica at (default http://<http-addr>)")
	zk := f.Str("zk", "", "ZooKeeper servers, comma separated, e.g. 10.0.0.1:2181,10.0.0.2:2181 (empty: in-process coordinator, single replica only)")
	zkRoot := f.Str("zk-root", "/shardjob", "ZooKeeper path of this cluster")
	zkSession := f.Dur("zk-session-timeout", 6*time.Second, "ZooKeeper session timeout")
	partitions := f.Num("scheduling-partitions", partition.DefaultCount, "number of scheduling partitions the admins share out (1 to 4096); the same on every admin: the first records it, and changing it takes 'shardjob-admin repartition' with every admin stopped")
	f.Group("Storage")
	driver := f.Str("db-driver", "mysql", "mysql, postgres or sqlite")
	dsn := f.Str("db-dsn", "", "database DSN, e.g. shardjob:pw@tcp(127.0.0.1:3306)/shardjob (mysql) or postgres://shardjob:pw@127.0.0.1:5432/shardjob (postgres)")
	deadRetention := deadFlag(f)
	dedupArchive := f.Str("dedup-archive", "", "app=datasource pairs, comma separated: create each app's dedup-archive job (daily, editable) on first start; datasource is the --sql-datasource name on the app's executors (docs/retention.md)")
	f.Group("Security")
	authConfig := authFlags(f)
	secret := f.Str("executor-secret", "", "shared secret authenticating executor traffic (at least 16 characters; no default)")
	metricsToken := f.Str("metrics-token", "", "bearer token GET /metrics requires (prefer the environment variable to keep it out of ps); empty: /metrics is open, as is conventional (see docs/metrics.md)")
	f.Group("Scheduling")
	startBatch := f.Num("start-batch", 500, "pending runs started per transaction (1 to 10000; 1 is the per-run path: a transaction and a push per run)")
	scheduleCache := f.Num("schedule-cache", 100_000, "parsed schedules the leader keeps in memory (one per job; the one used longest ago is evicted and parsed again when due; 1000 to 10000000)")
	unplaceable := f.Dur("unplaceable-timeout", 10*time.Minute, "how long after its scheduled time a run may wait for an online executor of its app with its handler before it fails with the reason")
	platformSlots := f.Num("max-running-slots", 0, "the most slots of all apps placed on executors at once, the platform's shared capacity (0: no limit); when apps compete for it, each gets room in proportion to its weight (docs/tenancy.md, Fair share)")
	aging := f.Dur("priority-aging", protocol.DefaultPriorityAging, "how long a due run waits before it counts one priority higher (low work waiting 3 times this competes with critical work, older first); 0: no aging")
	holdRecheck := f.Dur("hold-recheck", 5*time.Second, "how often the leader checks again a run it holds: a run of a job whose waits (wait_for) are not met, or a job backfill's run waiting for its turn")
	dispatchTimeout := f.Dur("dispatch-timeout", 30*time.Second, "how long an executor may leave an attempt placed on it unacknowledged before the attempt fails (the job's retry policy decides what follows)")
	grace := f.Dur("missed-fire-grace", 30*time.Second, "how late a firing may be before a missed-fire alarm")
	behindLag := f.Dur("audit-behind-lag", 2*time.Minute, "how far the missed-fire gap audit may fall behind (its oldest unchecked firing older than the grace plus this) before a watchdog_behind alarm")
	f.Group("Executors")
	hb := f.Dur("heartbeat-interval", protocol.DefaultHeartbeat, "executor heartbeat interval")
	forgetLost := forgetFlag(f)
	xxlConfig := xxljobFlags(f)
	f.Group("Alarms and metrics")
	alarmFile := f.Str("alarm-channels", "", "JSON file of alarm channels (webhook, slack, dingtalk, feishu, smtp; see docs/alarms.md); empty: no delivery")
	sampleInterval := sampleFlag(f)
	f.Group("HTTP")
	httpConfig := httpFlags(f)
	f.Group("Logging")
	logFormat := f.Str("log-format", "text", "text or json")
	logLevel := f.Str("log-level", "info", "debug, info, warn or error")
	if err := f.Parse(args); err != nil {
		return err
	}
	if *dispatchTimeout < time.Second {
		return fmt.Errorf("--dispatch-timeout %s: use at least 1s (default 30s)", *dispatchTimeout)
	}
	if *holdRecheck < 100*time.Millisecond || *holdRecheck > time.Hour {
		return fmt.Errorf("--hold-recheck %s: use a duration from 100ms to 1h (default 5s)", *holdRecheck)
	}
	if *aging < 0 || *aging > 24*time.Hour {
		return fmt.Errorf("--priority-aging %s: use a duration from 0 (no aging) to 24h (default 5m)", *aging)
	}
	if *platformSlots < 0 || *platformSlots > 100_000_000 {
		return fmt.Errorf("--max-running-slots %d: use a number of slots from 0 (no limit) to 100000000", *platformSlots)
	}
	priorityAging := *aging
	if priorityAging == 0 {
		priorityAging = -1 // the scheduler's "no aging"
	}
	if *unplaceable < time.Second {
		return fmt.Errorf("--unplaceable-timeout %s: use at least 1s (default 10m)", *unplaceable)
	}
	if *scheduleCache < 1000 || *scheduleCache > 10_000_000 {
		return fmt.Errorf("--schedule-cache %d: use a number of schedules from 1000 to 10000000 (default 100000)", *scheduleCache)
	}
	if *startBatch < 1 || *startBatch > 10000 {
		return fmt.Errorf("--start-batch %d: use a number of runs from 1 to 10000 (default 500)", *startBatch)
	}
	forget, err := forgetLost()
	if err != nil {
		return err
	}
	dead, err := deadRetention()
	if err != nil {
		return err
	}
	sample, err := sampleInterval()
	if err != nil {
		return err
	}
	httpCfg, err := httpConfig()
	if err != nil {
		return err
	}
	log, err := cliflags.NewLogger(stderr, *logFormat, *logLevel)
	if err != nil {
		return err
	}
	archives, err := retention.ParseArchiveJobs(*dedupArchive)
	if err != nil {
		return fmt.Errorf("--dedup-archive: %w", err)
	}
	var servers []string
	for _, s := range strings.Split(*zk, ",") {
		if s = strings.TrimSpace(s); s != "" {
			servers = append(servers, s)
		}
	}
	srv, err := server.New(ctx, server.Config{
		ID: *id, HTTPAddr: *addr, AdvertiseURL: *adv, DBDriver: *driver, DBDSN: *dsn,
		ZKServers: servers, ZKRoot: *zkRoot, ZKSessionTimeout: *zkSession, SchedulingPartitions: *partitions,
		ExecutorSecret: *secret, Timing: protocol.Timing{Heartbeat: *hb}, AlarmChannelsFile: *alarmFile, Out: stdout, Logger: log,
		Scheduler: scheduler.Config{
			StartBatch: *startBatch, ScheduleCache: *scheduleCache, UnplaceableTimeout: *unplaceable, PriorityAging: priorityAging, MaxRunningSlots: int64(*platformSlots), HoldRecheck: *holdRecheck, DispatchTimeout: *dispatchTimeout, ForgetLostAfter: forget,
		},
		Watchdog:     watchdog.Config{Grace: *grace, BehindLag: *behindLag},
		Utilization:  utilization.Config{Interval: sample},
		Retention:    retention.Config{Dead: dead},
		MetricsToken: *metricsToken, DedupArchive: archives, HTTP: httpCfg, Auth: authConfig(),
		XXLJob: xxlConfig(),
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "shardjob: admin %s serving at %s\n", *id, srv.URL())
	return srv.Serve(ctx)
}

func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := cliflags.New("migrate", stderr)
	driver := f.Str("db-driver", "mysql", "mysql, postgres or sqlite")
	dsn := f.Str("db-dsn", "", "database DSN (mysql, postgres) or SQLite file")
	if err := f.Parse(args); err != nil {
		return err
	}
	st, err := store.Open(ctx, store.Config{Driver: *driver, DSN: *dsn})
	if err != nil {
		return fmt.Errorf("--db-dsn: %w", err)
	}
	defer st.Close()
	n, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "shardjob: applied %d migration(s); schema version %d\n", n, v)
	return nil
}
