// Command shardjob-executor is the ready-made shardjob executor: the SDK in
// a process, configured by flags or SHARDJOB_* environment variables,
// hosting the demo handlers.
//
//	shardjob-executor --app demo --admins http://127.0.0.1:8080 --secret-file /etc/shardjob/executor.secret
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
	"strings"
	"syscall"
	"time"

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
	hb := fs.Duration("heartbeat-interval", 2*time.Second, "heartbeat interval")
	drain := fs.Duration("drain-timeout", 30*time.Second, "how long running slots may finish on shutdown")
	logFormat := str("log-format", "text", "text or json")
	demoDSN := str("demo-db-dsn", "", "MySQL/MariaDB DSN of a business database for the record-level demo handlers demo.ledger and demo.ledger-external (empty: they are not registered)")
	fs.String("config", os.Getenv("SHARDJOB_CONFIG"), "file of name=value lines setting any of these flags (flags on the command line win) (env SHARDJOB_CONFIG)")
	if path := configPath(args); path != "" {
		if err := applyConfigFile(fs, path); err != nil {
			fmt.Fprintf(stderr, "shardjob-executor: --config %s: %v\n", path, err)
			return 2
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var log *slog.Logger
	switch *logFormat {
	case "text":
		log = slog.New(slog.NewTextHandler(stderr, nil))
	case "json":
		log = slog.New(slog.NewJSONHandler(stderr, nil))
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
	ex, err := sdk.New(sdk.Config{
		App: *app, Admins: urls, Secret: *secret, ListenAddr: *listen, AdvertiseURL: *advertise,
		InstanceID: *instance, Capacity: *capacity, HeartbeatInterval: *hb, DrainTimeout: *drain,
		ResultsDir: *resultsDir, Logger: log, Version: Version,
	})
	if err != nil {
		fmt.Fprintf(stderr, "shardjob-executor: %s\n", strings.Join(strings.Fields(err.Error()), " "))
		return 1
	}
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
