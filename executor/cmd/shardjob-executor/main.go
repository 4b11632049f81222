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
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/shardjob/shardjob/executor/builtin"
	"github.com/shardjob/shardjob/executor/demo"
	"github.com/shardjob/shardjob/sdk"
	"github.com/shardjob/shardjob/sdk/cliflags"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := cliflags.New("shardjob-executor", stderr)
	str := fs.Str
	app := str("app", "", "app whose jobs this executor runs (required)")
	admins := str("admins", "", "admin base URLs, comma separated (required), e.g. http://10.0.0.1:8080,http://10.0.0.2:8080")
	secret := str("secret", "", "executor secret shared with the admins (or --secret-file)")
	secretFile := str("secret-file", "", "file holding the executor secret")
	listen := str("listen", "127.0.0.1:0", "listen address for pushes from the admin")
	advertise := str("advertise-url", "", "URL the admin reaches this executor at (default http://<listen address>)")
	instance := str("instance-id", "", "stable instance id (default hostname-pid-random)")
	resultsDir := str("results-dir", "", "keep unacknowledged results on disk here so they survive a restart (give a stable --instance-id too)")
	capacity := fs.Num("capacity", 4, "slots run at once")
	maxPending := fs.Num("max-pending-results", sdk.DefaultMaxPendingResults, "work held at most: queued + running slots + results no admin has acknowledged yet; beyond it new assignments are refused (results are never dropped)")
	hb := fs.Dur("heartbeat-interval", sdk.DefaultHeartbeatInterval, "heartbeat interval")
	drain := fs.Dur("drain-timeout", 30*time.Second, "how long running slots may finish on shutdown")
	logFormat := str("log-format", "text", "text or json")
	logLevel := str("log-level", "info", "debug, info, warn or error; at debug every slot's start and successful end is logged too")
	serveMetrics := fs.Flag("metrics", true, "serve Prometheus metrics (shardjob_executor_*, Go runtime, process) unauthenticated at GET /metrics on the listen address; /healthz and /readyz are always served")
	demoDSN := str("demo-db-dsn", "", "business database for the record-level demo handlers demo.ledger and demo.ledger-external: a MySQL/MariaDB DSN (user:pw@tcp(host:3306)/business) or a PostgreSQL URL (postgres://user:pw@host:5432/business) (empty: they are not registered)")
	httpAllow := fs.List("http-allow", ",", "http handler: destinations allowed, comma separated: host names, *.domain, IPs, CIDRs, or * for any public address; loopback, private and other special addresses only by IP or CIDR (default none: every request refused)")
	sqlSources := fs.List("sql-datasource", "\n", "sql handler: a data source name=driver:dsn, driver mysql (MySQL, MariaDB), postgres (PostgreSQL: a postgres:// URL or key=value DSN) or sqlite (a file), e.g. billing=mysql:user:pass@tcp(db:3306)/billing or ledger=postgres:postgres://user:pass@db:5432/ledger?sslmode=require; repeat the flag for more (env: one per line) (default none)")
	shellEnable := fs.Flag("shell-enable", false, "shell handler: let jobs run the programs of --shell-allow on this machine (default false: every shell job refused)")
	shellAllow := fs.List("shell-allow", ",", "shell handler: absolute paths of the programs jobs may run, comma separated (default none)")
	if err := fs.Parse(args); err != nil {
		switch {
		case errors.Is(err, flag.ErrHelp):
			return 0
		case cliflags.Unprinted(err) != "":
			fmt.Fprintf(stderr, "shardjob-executor: %s\n", strings.Join(strings.Fields(cliflags.Unprinted(err)), " "))
		}
		return 2
	}
	log, err := cliflags.NewLogger(stderr, *logFormat, *logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "shardjob-executor: %v\n", err)
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
		HTTP:  builtin.HTTPConfig{Allow: httpAllow.Vals},
		SQL:   builtin.SQLConfig{DataSources: map[string]builtin.DataSource{}},
		Shell: builtin.ShellConfig{Enabled: shellOn, Allow: shellAllow.Vals},
	}
	for _, spec := range sqlSources.Vals {
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
	log.Info("built-in handlers", "http_allow", strings.Join(httpAllow.Vals, ","), "sql_datasources", dataSourceNames(bcfg.SQL),
		"shell_enabled", shellOn, "shell_allow", strings.Join(shellAllow.Vals, ","))
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
