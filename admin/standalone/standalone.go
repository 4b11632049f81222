// Package standalone runs shardjob in one process with no external service:
// the admin with an embedded SQLite file and the in-process coordinator, plus
// a demo executor that talks to the admin over the same loopback HTTP
// protocol a remote executor uses. It is what `make run` starts.
//
// Files under DataDir: shardjob.db (the platform database),
// executor.secret (the generated executor secret, mode 0600) and, from the
// first start until user admin first signs in, admin.password (mode 0600).
// Deleting DataDir starts afresh: new database, secret and password.
//
// The demo executor logs at warn and above only: at info it would write
// lines for every slot, and the first-start password would scroll away.
package standalone

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/retention"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/server"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/utilization"
	"github.com/shardjob/shardjob/admin/xxljob"
	"github.com/shardjob/shardjob/executor/demo"
	"github.com/shardjob/shardjob/sdk"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// DemoApp is the app of the demo executor and the demo job.
const DemoApp = "demo"

// PasswordFile is the file under DataDir that holds the first-start
// password of user admin until that user first signs in.
const PasswordFile = "admin.password"

// Config of standalone mode.
type Config struct {
	// DataDir holds the database and the secret. Default ./data.
	DataDir string
	// HTTPAddr of the console and API. Default 127.0.0.1:8080.
	HTTPAddr string
	// HTTP bounds the HTTP server (trusted proxies, timeouts, connections
	// per client address), as in serve mode. Zero fields: the defaults of
	// server.HTTPConfig.
	HTTP server.HTTPConfig
	// Auth is how people sign in, as in serve mode (server.AuthConfig).
	Auth server.AuthConfig
	// NoDemo disables the demo executor and demo job.
	NoDemo bool
	// XXLJob configures XXL-JOB executor support as in serve mode: its
	// TokensFile is --xxljob-tokens (without one no XXL-JOB executor may
	// register), its AllowedHosts --xxljob-allowed-hosts.
	XXLJob xxljob.Config
	// ForgetLostAfter (--forget-lost-after): how long a lost executor may
	// stay silent before it is marked gone. Default 1h.
	ForgetLostAfter time.Duration
	// SampleInterval (--sample-interval): how often utilization samples are
	// recorded (server.Config.Utilization.Interval). Default 30s.
	SampleInterval time.Duration
	// DeadRetention (--dead-retention): how long a dead letter is kept
	// (server.Config.Retention.Dead). Default 30 days.
	DeadRetention time.Duration
	// Out receives the first-start credentials. Default os.Stdout.
	Out io.Writer
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Clock is the admin's local clock (server.Config.Clock). Default
	// clock.System.
	Clock clock.Clock
	// Ready, if set, is called with the base URL once everything runs.
	Ready func(url string)
}

// DatabaseFile is the name of the SQLite database in the data directory;
// SQLite keeps its write-ahead log and shared memory beside it (-wal, -shm).
const DatabaseFile = "shardjob.db"

// ownerOnly makes the database file (created empty if need be) and its
// -wal and -shm files readable and writable by their owner only: they hold
// password hashes, API key hashes and every job's params. SQLite creates
// the -wal and -shm files with the mode of the database file; a database
// an older version created 0644 is narrowed at start.
func ownerOnly(dbFile string) error {
	f, err := os.OpenFile(dbFile, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("database file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("database file: %w", err)
	}
	for _, p := range []string{dbFile, dbFile + "-wal", dbFile + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("narrow %s to its owner: %w", p, err)
		}
	}
	return nil
}

// Run starts everything and blocks until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if cfg.DataDir == "" {
		cfg.DataDir = "data"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return &server.SettingError{Setting: "data-dir", Err: fmt.Errorf("%s: %w", cfg.DataDir, err)}
	}
	secret, err := loadOrCreateSecret(filepath.Join(cfg.DataDir, "executor.secret"))
	if err != nil {
		return err
	}
	if cfg.Out == nil {
		cfg.Out = os.Stdout
	}
	passwordFile := filepath.Join(cfg.DataDir, PasswordFile)
	dbFile := filepath.Join(cfg.DataDir, DatabaseFile)
	if err := ownerOnly(dbFile); err != nil {
		return &server.SettingError{Setting: "data-dir", Err: err}
	}
	srv, err := server.New(ctx, server.Config{
		ID: "standalone", HTTPAddr: cfg.HTTPAddr, DBDriver: "sqlite", DBDSN: dbFile,
		ExecutorSecret: secret, HTTP: cfg.HTTP, Auth: cfg.Auth, XXLJob: cfg.XXLJob, Out: cfg.Out, Logger: cfg.Logger, Clock: cfg.Clock,
		InitialPasswordFile: passwordFile,
		Scheduler:           scheduler.Config{ForgetLostAfter: cfg.ForgetLostAfter}, Utilization: utilization.Config{Interval: cfg.SampleInterval},
		Retention: retention.Config{Dead: cfg.DeadRetention},
	})
	if err != nil {
		return err
	}
	if _, err := os.Stat(passwordFile); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(cfg.Out, "shardjob: console users exist already in %s; forgot the password? stop shardjob and delete %s to start afresh (jobs and history go too)\n",
			dbFile, cfg.DataDir)
	}
	// The server outlives ctx until the demo executor has drained, delivered
	// its results and deregistered.
	serveCtx, stopServe := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServe()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serveCtx) }()
	// abandon stops the server after a failed setup and waits for it: the
	// setup error is the one to report, not Serve's.
	abandon := func() {
		stopServe()
		<-served //nolint:errcheck // see above
	}

	var ex *sdk.Executor
	if !cfg.NoDemo {
		if err := seedDemoJob(ctx, srv.Store()); err != nil {
			abandon()
			return err
		}
		ex, err = sdk.New(sdk.Config{App: DemoApp, Admins: []string{srv.URL()}, Secret: secret, InstanceID: "standalone-demo-executor", Logger: slog.New(atLeast{slog.LevelWarn, cfg.Logger.Handler()}).With("component", "demo-executor")})
		if err != nil {
			abandon()
			return err
		}
		demo.Register(ex)
		if err := ex.Start(ctx); err != nil {
			abandon()
			return fmt.Errorf("demo executor: %w", err)
		}
	}
	if cfg.Ready != nil {
		cfg.Ready(srv.URL())
	}
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	if ex != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 8*time.Second)
		_ = ex.Stop(stopCtx)
		cancel()
	}
	stopServe()
	if serr := <-served; err == nil {
		err = serr
	}
	return err
}

func loadOrCreateSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		s := strings.TrimSpace(string(b))
		if err := protocol.ValidateSecret(s); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		return s, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read executor secret: %w", err)
	}
	s := protocol.NewSecret()
	if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write executor secret: %w", err)
	}
	return s, nil
}

// seedDemoJob creates the demo job on the first start (when there is no job).
func seedDemoJob(ctx context.Context, st *store.Store) error {
	jobs, err := st.Jobs(ctx, 0, 1)
	if err != nil || len(jobs) > 0 {
		return err
	}
	now, err := st.Now(ctx)
	if err != nil {
		return err
	}
	v, err := jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{
		App: DemoApp, Name: "hello-every-5s", Description: "Demo: 8 slots every 5 seconds",
		Handler: "demo.hello", Cron: "*/5 * * * * *", SlotCount: 8, Params: "records=100",
		SlotParams: "0=Beijing,1=Shanghai",
	}}, now)
	if err != nil {
		return fmt.Errorf("demo job: %w", err)
	}
	_, err = st.CreateJob(ctx, v.Job)
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	return err
}

// atLeast passes on the records of level min and above.
type atLeast struct {
	min slog.Level
	slog.Handler
}

func (h atLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h atLeast) WithAttrs(attrs []slog.Attr) slog.Handler {
	return atLeast{h.min, h.Handler.WithAttrs(attrs)}
}

func (h atLeast) WithGroup(name string) slog.Handler {
	return atLeast{h.min, h.Handler.WithGroup(name)}
}
