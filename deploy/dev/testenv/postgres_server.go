package testenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	postgresStartTimeout = 60 * time.Second
	postgresStopTimeout  = 30 * time.Second
)

// PostgreSQL is a private PostgreSQL server owned by one test
// (StartPostgreSQL), for tests that stop, kill or freeze the database. It
// listens on 127.0.0.1 on its own port, trusts user postgres without a
// password and keeps its data directory across Stop/Kill and Start.
type PostgreSQL struct {
	datadir string
	port    int
	srv     *server
}

// StartPostgreSQL starts a private PostgreSQL server for the calling test
// from Debian's packaged binaries (postgresql-<major>; the newest installed
// major is used). It is stopped (fast shutdown, SIGINT, then SIGKILL after
// 30s) and its directory removed when the test ends; with
// SHARDJOB_TEST_KEEP=1 the directory is kept.
//
// The data directory is a copy of one made by initdb once per test process
// (when the package uses Main). PostgreSQL refuses to run as root: as root
// the server and initdb run as the system user postgres, which the package
// creates, and the directory is given to it. The settings are made for
// tests: fsync off (a killed server still loses no committed row; only an
// OS crash would), 64 MB of shared buffers.
func StartPostgreSQL(t testing.TB) *PostgreSQL {
	t.Helper()
	return startPrivate(t, "PostgreSQL", "sjt-pg-", func(dir string) (*PostgreSQL, *server, error) {
		p, err := newPostgreSQL(dir)
		if p == nil {
			return nil, nil, err
		}
		return p, p.srv, err
	})
}

// Addr returns "127.0.0.1:port".
func (p *PostgreSQL) Addr() string { return "127.0.0.1:" + strconv.Itoa(p.port) }

// DSN returns a URL for database db ("postgres" for the maintenance one)
// as user postgres.
func (p *PostgreSQL) DSN(db string) string {
	return "postgres://postgres@" + p.Addr() + "/" + db + "?sslmode=disable"
}

// FailFastPool opens a pool on database db for a test that kills the
// server: connecting fails within a second while it is down, and a
// statement within timeout. It takes "?" placeholders
// (PostgresQMarkDriver), as the tests' own statements are written.
func (p *PostgreSQL) FailFastPool(db string, timeout time.Duration) (*sql.DB, error) {
	return sql.Open(PostgresQMarkDriver, fmt.Sprintf("%s&connect_timeout=1&statement_timeout=%d", p.DSN(db), timeout.Milliseconds()))
}

// PID returns the pid of the running postmaster, or 0 when it is not running.
func (p *PostgreSQL) PID() int { return p.srv.pid() }

// LogPath returns the server log (all runs, appended).
func (p *PostgreSQL) LogPath() string { return p.srv.logPath }

// Stop shuts the server down (fast shutdown: open sessions are ended), and
// kills it if it did not exit within 30s. Stopping a stopped server does
// nothing.
func (p *PostgreSQL) Stop() error { return p.srv.stop() }

// Kill sends SIGKILL to the postmaster and its backends and waits until it
// is gone; committed transactions survive it (crash recovery at Start).
func (p *PostgreSQL) Kill() error { return p.srv.kill() }

// Start starts the stopped or killed server again on the same port and data
// directory and waits until it accepts connections.
func (p *PostgreSQL) Start() error { return p.srv.start() }

// CreateDatabase creates database name on the server.
func (p *PostgreSQL) CreateDatabase(ctx context.Context, name string) error {
	db, err := sql.Open("pgx", p.DSN("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return err
}

func newPostgreSQL(dir string) (*PostgreSQL, error) {
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := postgresCredential()
	if err != nil {
		return nil, err
	}
	p := &PostgreSQL{datadir: filepath.Join(dir, "data")}
	if err := giveTo(dir, cred); err != nil {
		return nil, err
	}
	if mainActive() {
		tmpl, err := postgresTemplate.get(func() (string, error) { return makePostgresTemplate(bin, cred) })
		if err != nil {
			return nil, err
		}
		if err := copyTree(tmpl, p.datadir); err != nil {
			return nil, fmt.Errorf("testenv: copy PostgreSQL template data directory: %w", err)
		}
		if err := giveTo(p.datadir, cred); err != nil {
			return nil, err
		}
		if err := os.Chmod(p.datadir, 0o700); err != nil { // postgres checks
			return nil, err
		}
	} else if err := initPostgres(bin, p.datadir, cred); err != nil {
		return nil, err
	}
	p.srv = &server{
		name:         "postgres",
		addr:         p.Addr,
		logPath:      filepath.Join(dir, "postgres.log"),
		startTimeout: postgresStartTimeout,
		stopTimeout:  postgresStopTimeout,
		spec: func() procSpec {
			return procSpec{
				name: "postgres",
				path: filepath.Join(bin, "postgres"),
				args: []string{
					"-D", p.datadir, "-p", strconv.Itoa(p.port), "-k", dir,
					"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off",
					"-c", "shared_buffers=64MB", "-c", "max_connections=200", "-c", "logging_collector=off",
				},
				logPath:    filepath.Join(dir, "postgres.log"),
				stopSignal: syscall.SIGINT,
				credential: cred,
			}
		},
		ready: func(ctx context.Context) error { return pingPostgres(ctx, p.DSN("postgres")) },
	}
	for attempt := 1; ; attempt++ {
		if p.port, err = freePort(); err != nil {
			return nil, err
		}
		err = p.srv.start()
		var se *StartError
		if errors.As(err, &se) && se.addrInUse() && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return p, nil
	}
}

var postgresTemplate lazy[string]

// makePostgresTemplate runs initdb once per test process.
func makePostgresTemplate(bin string, cred *syscall.Credential) (string, error) {
	pdir, err := processDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(pdir, "pg-template")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if cred != nil {
		// The server's user passes through the process directory (root's, 0700).
		if err := os.Chmod(pdir, 0o711); err != nil {
			return "", err
		}
	}
	if err := giveTo(dir, cred); err != nil {
		return "", err
	}
	datadir := filepath.Join(dir, "data")
	return datadir, initPostgres(bin, datadir, cred)
}

// initPostgres creates a cluster in datadir: user postgres, trust
// authentication, UTF-8 with ICU available for the platform's collation.
func initPostgres(bin, datadir string, cred *syscall.Credential) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", datadir, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("testenv: initdb %s: %w\n%s", datadir, err, out)
	}
	return nil
}

// postgresBinDir returns the bin directory of the newest installed
// PostgreSQL major (Debian: /usr/lib/postgresql/<major>/bin).
func postgresBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var found []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		return "", errors.New("testenv: no PostgreSQL server binaries under /usr/lib/postgresql/*/bin; run deploy/dev/ensure-deps.sh (Debian: apt-get install postgresql)")
	}
	sort.Slice(found, func(i, j int) bool { return majorOf(found[i]) < majorOf(found[j]) })
	return found[len(found)-1], nil
}

func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// postgresCredential is the user the server runs as: nil (the test's
// user) unless the test runs as root, then the system user postgres,
// which Debian's package creates.
func postgresCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("testenv: PostgreSQL does not run as root and there is no user postgres to run it as (%w); install Debian's postgresql package, which creates it", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("testenv: user postgres: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// giveTo makes dir and everything in it belong to cred's user (nothing
// to do when cred is nil), so that the server can write there.
func giveTo(dir string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(cred.Uid), int(cred.Gid))
	})
}

// pingPostgres is one readiness probe: a connection and a query.
func pingPostgres(ctx context.Context, dsn string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	pctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return db.PingContext(pctx)
}
