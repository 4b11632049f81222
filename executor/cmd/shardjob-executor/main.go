// Command shardjob-executor is the ready-made shardjob executor: the SDK in
// a process, configured by flags or SHARDJOB_* environment variables,
// hosting the demo handlers.
//
//	shardjob-executor --app demo --admins http://127.0.0.1:8080 --secret-file /etc/shardjob/executor.secret
//
// It hosts the built-in handlers http, sql, shell and dedup-archive (see
// docs/builtin-handlers.md), closed by default: http reaches only the
// destinations of --http-allow, sql only the data sources of
// --sql-datasource, shell nothing unless --shell-enable and --shell-allow.
//
// GET /healthz (alive), /readyz (registered with an admin; 503 while
// draining) and, unless --metrics=false, /metrics (Prometheus; see
// docs/metrics.md) are served on the listen address.
//
// SIGTERM or SIGINT drains: the executor stops taking work, lets running
// slots finish (up to --drain-timeout), delivers their results and
// deregisters.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/shardjob/shardjob/executor/builtin"
	"github.com/shardjob/shardjob/executor/demo"
	"github.com/shardjob/shardjob/sdk"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func envName(flagName string) string {
	return "SHARDJOB_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("shardjob-executor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	str := func(name, def, help string) *string {
		if v, ok := os.LookupEnv(envName(name)); ok {
			def = v
		}
		return fs.String(name, def, help+" (env "+envName(name)+")")
	}
	app := str("app", "", "app whose jobs this executor runs (required)")
	admins := str("admins", "", "admin base URLs, comma separated (required), e.g. http://10.0.0.1:8080,http://10.0.0.2:8080")
	secret := str("secret", "", "executor secret shared with the admins (or --secret-file)")
	secretFile := str("secret-file", "", "file holding the executor secret")
	listen := str("listen", "127.0.0.1:0", "listen address for pushes from the admin")
	advertise := str("advertise-url", "", "URL the admin reaches this executor at (default http://<listen address>)")
	instance := str("instance-id", "", "stable instance id (default hostname-pid-random)")
	resultsDir := str("results-dir", "", "keep unacknowledged results on disk here so they survive a restart (give a stable --instance-id too)")
	capacity := fs.Int("capacity", 4, "slots run at once")
	maxPending := fs.Int("max-pending-results", sdk.DefaultMaxPendingResults, "work held at most: queued + running slots + results no admin has acknowledged yet; beyond it new assignments are refused (results are never dropped)")
	hb := fs.Duration("heartbeat-interval", 2*time.Second, "heartbeat interval")
	drain := fs.Duration("drain-timeout", 30*time.Second, "how long running slots may finish on shutdown")
	logFormat := str("log-format", "text", "text or json")
	logLevel := str("log-level", "info", "debug, info, warn or error; at debug every slot's start and successful end is logged too")
	metricsOn := true
	if v, ok := os.LookupEnv(envName("metrics")); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			fmt.Fprintf(stderr, "shardjob-executor: %s=%q: use true or false\n", envName("metrics"), v)
			return 2
		}
		metricsOn = b
	}
	serveMetrics := fs.Bool("metrics", metricsOn, "serve Prometheus metrics (shardjob_executor_*, Go runtime, process) unauthenticated at GET /metrics on the listen address; /healthz and /readyz are always served (env "+envName("metrics")+")")
	demoDSN := str("demo-db-dsn", "", "MySQL/MariaDB DSN of a business database for the record-level demo handlers demo.ledger and demo.ledger-external (empty: they are not registered)")
	list := func(name, sep, help string) *listFlag {
		l := &listFlag{sep: sep}
		if v, ok := os.LookupEnv(envName(name)); ok {
			_ = l.Set(v)
			l.replaceOnNextSet() // the config file replaces the environment
		}
		fs.Var(l, name, help+" (env "+envName(name)+")")
		return l
	}
	httpAllow := list("http-allow", ",", "http handler: destinations allowed, comma separated: host names, *.domain, IPs, CIDRs, or * for any public address; loopback, private and other special addresses only by IP or CIDR (default none: every request refused)")
	sqlSources := list("sql-datasource", "\n", "sql handler: a data source name=driver:dsn, driver mysql or sqlite, e.g. billing=mysql:user:pass@tcp(db:3306)/billing; repeat the flag for more (env: one per line) (default none)")
	shellDefault := false
	if v, ok := os.LookupEnv(envName("shell-enable")); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			fmt.Fprintf(stderr, "shardjob-executor: %s=%q: use true or false\n", envName("shell-enable"), v)
			return 2
		}
		shellDefault = b
	}
	shellEnable := fs.Bool("shell-enable", shellDefault, "shell handler: let jobs run the programs of --shell-allow on this machine (default false: every shell job refused) (env "+envName("shell-enable")+")")
	shellAllow := list("shell-allow", ",", "shell handler: absolute paths of the programs jobs may run, comma separated (default none)")
	fs.String("config", os.Getenv("SHARDJOB_CONFIG"), "file of name=value lines setting any of these flags (flags on the command line win) (env SHARDJOB_CONFIG)")
	if path := configPath(args); path != "" {
		if err := applyConfigFile(fs, path); err != nil {
			fmt.Fprintf(stderr, "shardjob-executor: --config %s: %v\n", path, err)
			return 2
		}
	}
	for _, l := range []*listFlag{httpAllow, sqlSources, shellAllow} {
		l.replaceOnNextSet() // the command line replaces what the environment or the file set
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "shardjob-executor: --log-level %q: use debug, info, warn or error\n", *logLevel)
		return 2
	}
	opts := &slog.HandlerOptions{Level: level}
	var log *slog.Logger
	switch *logFormat {
	case "text":
		log = slog.New(slog.NewTextHandler(stderr, opts))
	case "json":
		log = slog.New(slog.NewJSONHandler(stderr, opts))
	default:
		fmt.Fprintf(stderr, "shardjob-executor: --log-format %q: use text or json\n", *logFormat)
		return 2
	}
	if *secret == "" && *secretFile != "" {
		b, err := os.ReadFile(*secretFile)
		if err != nil {
			fmt.Fprintf(stderr, "shardjob-executor: --secret-file: %v\n", err)
			return 1
		}
		*secret = strings.TrimSpace(string(b))
	}
	var urls []string
	for _, u := range strings.Split(*admins, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	cfg := sdk.Config{
		App: *app, Admins: urls, Secret: *secret, ListenAddr: *listen, AdvertiseURL: *advertise,
		InstanceID: *instance, Capacity: *capacity, MaxPendingResults: *maxPending, HeartbeatInterval: *hb, DrainTimeout: *drain,
		ResultsDir: *resultsDir, Logger: log, Version: Version,
	}
	if *serveMetrics {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		cfg.MetricsRegisterer, cfg.MetricsGatherer = reg, reg
	}
	ex, err := sdk.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "shardjob-executor: %s\n", strings.Join(strings.Fields(err.Error()), " "))
		return 1
	}
	shellOn := *shellEnable
	bcfg := builtin.Config{
		HTTP:  builtin.HTTPConfig{Allow: httpAllow.vals},
		SQL:   builtin.SQLConfig{DataSources: map[string]builtin.DataSource{}},
		Shell: builtin.ShellConfig{Enabled: shellOn, Allow: shellAllow.vals},
	}
	for _, spec := range sqlSources.vals {
		name, ds, err := builtin.ParseDataSource(spec)
		if err == nil {
			if _, dup := bcfg.SQL.DataSources[name]; dup {
				err = fmt.Errorf("sql data source %q given twice", name)
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "shardjob-executor: --sql-datasource: %v\n", err)
			return 2
		}
		bcfg.SQL.DataSources[name] = ds
	}
	builtins, err := builtin.New(bcfg)
	if err != nil {
		fmt.Fprintf(stderr, "shardjob-executor: built-in handlers: %v\n", err)
		return 2
	}
	defer builtins.Close()
	builtins.Register(ex)
	log.Info("built-in handlers", "http_allow", strings.Join(httpAllow.vals, ","), "sql_datasources", dataSourceNames(bcfg.SQL),
		"shell_enabled", shellOn, "shell_allow", strings.Join(shellAllow.vals, ","))
	demo.Register(ex)
	if *demoDSN != "" {
		db, err := demo.OpenDB(*demoDSN)
		if err == nil {
			defer db.Close()
			err = demo.RegisterRecords(ex, db)
		}
		if err != nil {
			fmt.Fprintf(stderr, "shardjob-executor: --demo-db-dsn: %s\n", strings.Join(strings.Fields(err.Error()), " "))
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := ex.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "shardjob-executor: %s\n", strings.Join(strings.Fields(err.Error()), " "))
		return 1
	}
	fmt.Fprintf(stdout, "shardjob: executor %s of app %s listening at %s\n", ex.InstanceID(), *app, ex.Addr())
	<-ctx.Done()
	stop()
	log.Info("draining")
	if err := ex.Stop(context.Background()); err != nil {
		fmt.Fprintf(stderr, "shardjob-executor: stop: %v\n", err)
		return 1
	}
	return 0
}

// configPath finds --config in args (or SHARDJOB_CONFIG) before the flags
// are parsed, so that the file can supply defaults the command line overrides.
func configPath(args []string) string {
	path := os.Getenv("SHARDJOB_CONFIG")
	for i, a := range args {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "config" {
			continue
		}
		if hasValue {
			path = value
		} else if i+1 < len(args) {
			path = args[i+1]
		}
	}
	return path
}

// applyConfigFile sets flags from "name = value" lines; '#' starts a comment.
func applyConfigFile(fs *flag.FlagSet, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return fmt.Errorf("line %d: want name = value", n+1)
		}
		if name == "config" || fs.Lookup(name) == nil {
			return fmt.Errorf("line %d: unknown setting %q (run with -h for the list)", n+1, name)
		}
		if err := fs.Set(name, value); err != nil {
			return fmt.Errorf("line %d: %s: %w", n+1, name, err)
		}
	}
	return nil
}

// listFlag is a flag that collects values: each use adds its values (split
// on sep), except that the first use on the command line replaces the
// values that came from the environment or the config file.
type listFlag struct {
	sep     string
	vals    []string
	replace bool
}

func (l *listFlag) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(l.vals, l.sep)
}

func (l *listFlag) Set(v string) error {
	if l.replace {
		l.vals, l.replace = nil, false
	}
	for _, part := range strings.Split(v, l.sep) {
		if part = strings.TrimSpace(part); part != "" {
			l.vals = append(l.vals, part)
		}
	}
	return nil
}

func (l *listFlag) replaceOnNextSet() { l.replace = len(l.vals) > 0 }

// dataSourceNames lists the configured data sources, without their DSNs
// (which may hold passwords).
func dataSourceNames(c builtin.SQLConfig) string {
	names := make([]string, 0, len(c.DataSources))
	for n, ds := range c.DataSources {
		names = append(names, n+"("+ds.Driver+")")
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
