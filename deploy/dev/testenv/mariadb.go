package testenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

const (
	mariadbStartTimeout   = 60 * time.Second
	mariadbStopTimeout    = 30 * time.Second
	mariadbInstallTimeout = 120 * time.Second
)

// MariaDB is a private mariadbd owned by one test (StartMariaDB) or shared by
// the tests of a process (MySQL when no other server is available). It
// listens on 127.0.0.1 on its own port and keeps its data directory across
// Stop/Kill and Start. The root user has an empty password.
type MariaDB struct {
	datadir string
	port    int
	srv     *server
}

// StartMariaDB starts a private mariadbd for the calling test, for tests that
// stop, kill or restart the database. It is stopped (SIGTERM, then SIGKILL
// after 30s) and its directory removed when the test ends; with
// SHARDJOB_TEST_KEEP=1 the directory is kept and its path logged.
//
// The data directory is a copy of one made by mariadb-install-db once per
// test process (when the package uses Main), so starting costs about a
// second, not three.
//
// settings are extra server options, "name=value" as in my.cnf (for example
// "innodb-buffer-pool-size=1G"), passed on mariadbd's command line; they
// override the defaults made for tests (64 MB buffer pool, 32 MB redo log,
// no fsync per commit). Benchmarks use them to measure on a server sized
// like a production one.
func StartMariaDB(t testing.TB, settings ...string) *MariaDB {
	t.Helper()
	return startPrivate(t, "MariaDB", "sjt-mariadb-", func(dir string) (*MariaDB, *server, error) {
		m, err := newMariaDB(dir, settings)
		if m == nil {
			return nil, nil, err
		}
		return m, m.srv, err
	})
}

// Addr returns "127.0.0.1:port".
func (m *MariaDB) Addr() string { return "127.0.0.1:" + strconv.Itoa(m.port) }

// DSN returns a go-sql-driver DSN for database db ("" for none) as root,
// with parseTime=true, loc=UTC and multiStatements=true.
func (m *MariaDB) DSN(db string) string {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = m.Addr()
	cfg.DBName = db
	return formatDSN(cfg)
}

// FailFastPool opens a pool on database db for a test that kills the
// server: connecting fails within a second while it is down, and a read or
// write on a connection within timeout.
func (m *MariaDB) FailFastPool(db string, timeout time.Duration) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(m.DSN(db))
	if err != nil {
		return nil, err
	}
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = time.Second, timeout, timeout
	return sql.Open("mysql", cfg.FormatDSN())
}

// PID returns the pid of the running mariadbd, or 0 when it is not running.
func (m *MariaDB) PID() int { return m.srv.pid() }

// LogPath returns the server log (all runs, appended).
func (m *MariaDB) LogPath() string { return m.srv.logPath }

// Stop shuts mariadbd down with SIGTERM, and kills it if it did not exit
// within 30s (returning an error). Stopping a stopped server does nothing.
func (m *MariaDB) Stop() error { return m.srv.stop() }

// Kill sends SIGKILL to mariadbd and waits until it is gone; committed
// transactions survive it. It fails if the server is not running.
func (m *MariaDB) Kill() error { return m.srv.kill() }

// Start starts the stopped or killed server again on the same port and data
// directory and waits until it answers a ping (after crash recovery).
func (m *MariaDB) Start() error { return m.srv.start() }

// newMariaDB creates a data directory in dir and starts mariadbd on it,
// with extra options settings ("name=value").
func newMariaDB(dir string, settings []string) (*MariaDB, error) {
	extra := make([]string, 0, len(settings))
	for _, s := range settings {
		if !strings.Contains(s, "=") || strings.HasPrefix(s, "-") {
			return nil, fmt.Errorf("testenv: MariaDB setting %q: want name=value, as in my.cnf", s)
		}
		extra = append(extra, "--"+s)
	}
	mariadbd, err := lookBinary("mariadbd", "mysqld")
	if err != nil {
		return nil, err
	}
	m := &MariaDB{datadir: filepath.Join(dir, "data")}
	cnf := filepath.Join(dir, "my.cnf")
	if err := writeMariaDBConfig(cnf, dir, m.datadir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return nil, err
	}
	if mainActive() {
		tmpl, err := mariadbTemplate.get(makeMariaDBTemplate)
		if err != nil {
			return nil, err
		}
		if err := copyTree(tmpl, m.datadir); err != nil {
			return nil, fmt.Errorf("testenv: copy MariaDB template data directory: %w", err)
		}
	} else if err := installMariaDB(cnf, m.datadir); err != nil {
		return nil, err
	}

	m.srv = &server{
		name:         "mariadbd",
		addr:         m.Addr,
		logPath:      filepath.Join(dir, "mariadbd.log"),
		startTimeout: mariadbStartTimeout,
		stopTimeout:  mariadbStopTimeout,
		spec: func() procSpec {
			return procSpec{
				name:    "mariadbd",
				path:    mariadbd,
				args:    append([]string{"--defaults-file=" + cnf, "--port=" + strconv.Itoa(m.port)}, extra...),
				logPath: filepath.Join(dir, "mariadbd.log"),
			}
		},
		ready: func(ctx context.Context) error { return pingMySQL(ctx, m.DSN(""), time.Second) },
	}
	for attempt := 1; ; attempt++ {
		if m.port, err = freePort(); err != nil {
			return nil, err
		}
		err = m.srv.start()
		var se *StartError
		if errors.As(err, &se) && se.addrInUse() && attempt < 3 {
			continue // another process took the port between FreePort and bind
		}
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}

// writeMariaDBConfig writes the option file used by both mariadb-install-db
// and mariadbd. Settings are chosen for tests: small memory, no fsync per
// commit (a killed process still loses nothing; only an OS crash would),
// the character set of Debian's packaged server.
func writeMariaDBConfig(path, dir, datadir string) error {
	var b strings.Builder
	b.WriteString("[mysqld]\n")
	fmt.Fprintf(&b, "datadir=%s\n", datadir)
	fmt.Fprintf(&b, "socket=%s\n", filepath.Join(dir, "mysqld.sock"))
	fmt.Fprintf(&b, "pid-file=%s\n", filepath.Join(dir, "mysqld.pid"))
	fmt.Fprintf(&b, "tmpdir=%s\n", filepath.Join(dir, "tmp"))
	b.WriteString(`bind-address=127.0.0.1
skip-name-resolve
character-set-server=utf8mb4
collation-server=utf8mb4_general_ci
max-connections=500
innodb-buffer-pool-size=64M
innodb-log-file-size=32M
innodb-flush-log-at-trx-commit=2
performance-schema=OFF
`)
	if os.Geteuid() == 0 {
		b.WriteString("user=root\n") // mariadbd refuses to run as root otherwise
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

var mariadbTemplate lazy[string]

// makeMariaDBTemplate runs mariadb-install-db once per test process; every
// MariaDB of the process starts from a copy.
func makeMariaDBTemplate() (string, error) {
	pdir, err := processDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(pdir, "mariadb-template")
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return "", err
	}
	cnf := filepath.Join(dir, "my.cnf")
	datadir := filepath.Join(dir, "data")
	if err := writeMariaDBConfig(cnf, dir, datadir); err != nil {
		return "", err
	}
	if err := installMariaDB(cnf, datadir); err != nil {
		return "", err
	}
	return datadir, nil
}

// installMariaDB creates the system tables in datadir with a root user that
// has an empty password (not unix_socket authentication, so TCP works).
func installMariaDB(cnf, datadir string) error {
	installDB, err := lookBinary("mariadb-install-db", "mysql_install_db")
	if err != nil {
		return err
	}
	args := []string{
		"--defaults-file=" + cnf, // must come first
		"--datadir=" + datadir,
		"--auth-root-authentication-method=normal",
		"--skip-test-db",
		"--skip-name-resolve",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	logPath := filepath.Join(filepath.Dir(cnf), "install-db.log")
	p, err := startProc(procSpec{name: "mariadb-install-db", path: installDB, args: args, logPath: logPath})
	if err != nil {
		return err
	}
	select {
	case <-p.done:
	case <-time.After(mariadbInstallTimeout):
		_ = p.kill(10 * time.Second)
		return fmt.Errorf("testenv: mariadb-install-db did not finish within %s\n--- last lines of %s ---\n%s",
			mariadbInstallTimeout, logPath, p.out.tailText(tailLines))
	}
	if p.waitErr != nil {
		return fmt.Errorf("testenv: mariadb-install-db failed (%w)\n--- last lines of %s ---\n%s",
			p.waitErr, logPath, p.out.tailText(tailLines))
	}
	return nil
}

// pingMySQL opens one connection to dsn and pings it.
func pingMySQL(ctx context.Context, dsn string, timeout time.Duration) error {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return err
	}
	cfg.Timeout = timeout
	cfg.Logger = nopLogger{} // a server still starting makes the driver log handshake errors
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return db.PingContext(ctx)
}

// formatDSN is cfg.FormatDSN with parseTime, multiStatements and an
// explicit loc=UTC (FormatDSN leaves the default out; people reading a DSN
// in a log should not have to know the default).
func formatDSN(cfg *mysql.Config) string {
	cfg.ParseTime = true
	cfg.MultiStatements = true
	cfg.Loc = time.UTC
	return cfg.FormatDSN() + "&loc=UTC"
}

// lookBinary finds the first of names in PATH or in /usr/sbin and
// /usr/bin (sbin is not in the PATH of every user).
func lookBinary(names ...string) (string, error) {
	for _, name := range names {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
		for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"} {
			path := filepath.Join(dir, name)
			if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return path, nil
			}
		}
	}
	return "", fmt.Errorf("testenv: none of %s found in PATH, /usr/sbin or /usr/bin; run deploy/dev/ensure-deps.sh (Debian: apt-get install mariadb-server)",
		strings.Join(names, ", "))
}

// copyTree copies the regular files and directories under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm())
		case info.Mode().IsRegular():
			return copyFile(path, target, info.Mode().Perm())
		default:
			return nil // sockets and other special files
		}
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }() // read-only
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close() // the copy error is the one to report
		return err
	}
	return out.Close()
}

type nopLogger struct{}

func (nopLogger) Print(...any) {}
