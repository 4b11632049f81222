package testenv_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(testenv.Wrap(m))
}

func openDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return db
}

func TestMySQLGivesIsolatedDatabases(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		names []string
	)
	t.Cleanup(func() {
		// Runs after both subtests and their cleanups.
		if t.Failed() || os.Getenv(testenv.EnvKeep) != "" {
			return
		}
		require.Len(t, names, 2)
		require.NotEqual(t, names[0], names[1])
		server := openDB(t, testenv.MySQLServer(t))
		for _, name := range names {
			var n int
			require.NoError(t, server.QueryRow(
				"SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", name).Scan(&n))
			require.Zero(t, n, "database %s should have been dropped", name)
		}
	})
	for _, job := range []string{"first", "second"} {
		t.Run(job, func(t *testing.T) {
			t.Parallel()
			dsn := testenv.MySQL(t)
			cfg, err := mysql.ParseDSN(dsn)
			require.NoError(t, err)
			require.True(t, cfg.ParseTime)
			require.True(t, cfg.MultiStatements)
			require.Equal(t, time.UTC, cfg.Loc)
			require.Contains(t, dsn, "loc=UTC")
			require.Regexp(t, `^sjt_testenv_[0-9a-f]{12}$`, cfg.DBName)

			db := openDB(t, dsn)
			// Same table name in both tests; multiStatements is on.
			_, err = db.Exec("CREATE TABLE jobs (id INT PRIMARY KEY, name VARCHAR(64)); " +
				"INSERT INTO jobs VALUES (1, '" + job + "')")
			require.NoError(t, err)

			var name string
			require.NoError(t, db.QueryRow("SELECT name FROM jobs").Scan(&name))
			require.Equal(t, job, name, "each test sees only its own table")

			var current string
			var now time.Time // parseTime=true
			require.NoError(t, db.QueryRow("SELECT DATABASE(), NOW()").Scan(&current, &now))
			require.Equal(t, cfg.DBName, current)

			mu.Lock()
			names = append(names, current)
			mu.Unlock()
		})
	}
}

// connectZK connects to addr and waits for a session. The connection is
// closed, and its goroutines are gone, when the test ends.
func connectZK(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect([]string{addr}, 2*time.Second, zk.WithLogger(quietZK{}))
	require.NoError(t, err)
	hasSession := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		once := sync.Once{}
		for ev := range events { // closed once the connection is closed
			if ev.State == zk.StateHasSession {
				once.Do(func() { close(hasSession) })
			}
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		<-drained
	})
	select {
	case <-hasSession:
	case <-time.After(10 * time.Second):
		t.Fatalf("no ZooKeeper session with %s after 10s", addr)
	}
	return conn
}

type quietZK struct{}

func (quietZK) Printf(string, ...any) {}

func TestZooKeeperAcceptsClients(t *testing.T) {
	t.Parallel()
	addr := testenv.ZooKeeper(t)
	require.Equal(t, addr, testenv.ZooKeeper(t), "one server per test process")

	root := testenv.ZKChroot(t)
	require.Regexp(t, `^/sjt-[0-9a-f]{12}$`, root)
	require.NotEqual(t, root, testenv.ZKChroot(t))

	conn := connectZK(t, addr)
	acl := zk.WorldACL(zk.PermAll)
	_, err := conn.Create(root, nil, 0, acl)
	require.NoError(t, err)
	_, err = conn.Create(root+"/job", []byte("hello"), 0, acl)
	require.NoError(t, err)
	data, _, err := conn.Get(root + "/job")
	require.NoError(t, err)
	require.Equal(t, "hello", string(data))
}

func TestStartMariaDBSurvivesKill(t *testing.T) {
	t.Parallel()
	m := testenv.StartMariaDB(t)
	require.NotEqual(t, "127.0.0.1:3306", m.Addr())
	db := openDB(t, m.DSN(""))
	_, err := db.Exec("CREATE DATABASE chaos; CREATE TABLE chaos.runs (id INT PRIMARY KEY); " +
		"INSERT INTO chaos.runs VALUES (1), (2), (3)")
	require.NoError(t, err)

	pid := m.PID()
	require.NotZero(t, pid)
	require.NoError(t, m.Kill())
	require.Zero(t, m.PID())
	require.Error(t, m.Kill(), "killing a dead server is an error")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	require.Error(t, db.PingContext(ctx), "server is down")

	require.NoError(t, m.Start())
	require.NotZero(t, m.PID())
	require.NotEqual(t, pid, m.PID())
	require.Error(t, m.Start(), "starting a running server is an error")

	var n int
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM chaos.runs").Scan(&n))
	require.Equal(t, 3, n, "committed rows survive SIGKILL")

	require.NoError(t, m.Stop())
	require.NoError(t, m.Stop(), "stopping a stopped server does nothing")
	require.Zero(t, m.PID())
}

func TestStartZooKeeperStopStart(t *testing.T) {
	t.Parallel()
	z := testenv.StartZooKeeper(t)
	acl := zk.WorldACL(zk.PermAll)

	func() {
		conn := connectZK(t, z.Addr())
		defer conn.Close()
		_, err := conn.Create("/persistent", []byte("v1"), 0, acl)
		require.NoError(t, err)
	}()

	pid := z.PID()
	require.NotZero(t, pid)
	require.NoError(t, z.Stop())
	require.Zero(t, z.PID())
	require.NoError(t, z.Stop())

	require.NoError(t, z.Start())
	require.NotEqual(t, pid, z.PID())
	conn := connectZK(t, z.Addr())
	data, _, err := conn.Get("/persistent")
	require.NoError(t, err)
	require.Equal(t, "v1", string(data))

	require.NoError(t, z.Kill())
	require.Zero(t, z.PID())
	require.NoError(t, z.Start())
	require.NotZero(t, z.PID())
}

func TestProcessWaitForLineAndKill(t *testing.T) {
	t.Parallel()
	// The shell forks sleep; Kill must end both.
	p := testenv.StartProcess(t, "/bin/sh",
		[]string{"-c", `echo "hello $WHO"; echo oops >&2; sleep 30 & echo "child $!"; wait`},
		[]string{"WHO=world"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	line, err := p.WaitForLine(ctx, "hello")
	require.NoError(t, err)
	require.Equal(t, "hello world", line)

	m, err := p.WaitForRegexp(ctx, regexp.MustCompile(`^child (\d+)$`))
	require.NoError(t, err)
	child, err := strconv.Atoi(m[1])
	require.NoError(t, err)

	_, err = p.WaitForLine(ctx, "oops") // stderr counts too
	require.NoError(t, err)
	require.NotContains(t, p.Stdout(), "oops")
	require.Contains(t, p.Output(), "oops")

	require.NoError(t, p.Kill())
	var exitErr *exec.ExitError
	require.ErrorAs(t, p.Wait(), &exitErr)
	require.Equal(t, -1, p.ExitCode(), "killed by a signal")
	testenv.WaitFor(t, 5*time.Second, func() (bool, error) { return gone(child) }, "sleep child of the killed shell")

	log, err := os.ReadFile(p.LogPath())
	require.NoError(t, err)
	require.Contains(t, string(log), "hello world")
}

// gone reports whether pid no longer runs (a zombie waiting for a reaper
// that is not us counts as gone).
func gone(pid int) (bool, error) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z", nil
}

func TestProcessWaitForLineFailsWhenProcessExits(t *testing.T) {
	t.Parallel()
	p := testenv.StartProcess(t, "/bin/sh", []string{"-c", "echo bye; exit 3"}, nil)
	_, err := p.WaitForLine(context.Background(), "never printed")
	require.ErrorIs(t, err, testenv.ErrExited)
	require.Contains(t, err.Error(), "bye", "the error shows the last output")
	require.Error(t, p.Wait())
	require.Equal(t, 3, p.ExitCode())
}

func TestProcessWaitForLineHonoursContext(t *testing.T) {
	t.Parallel()
	p := testenv.StartProcess(t, "/bin/sh", []string{"-c", "echo started; sleep 30"}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := p.WaitForLine(ctx, "started")
	require.NoError(t, err)
	cancel()
	_, err = p.WaitForLine(ctx, "never printed")
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, p.Stop(), "sh exits on SIGTERM")
}

func TestBuildBinaryAndStop(t *testing.T) {
	t.Parallel()
	const pkg = "github.com/shardjob/shardjob/deploy/dev/testenv/testdata/sleeper"
	bin := testenv.BuildBinary(t, pkg)
	require.Equal(t, bin, testenv.BuildBinary(t, pkg), "built once per process")

	p := testenv.StartProcess(t, bin, []string{"x"}, []string{"SLEEPER_GREETING=hi"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	line, err := p.WaitForLine(ctx, "arg:")
	require.NoError(t, err)
	require.Equal(t, "arg: [x] env: hi", line)
	_, err = p.WaitForLine(ctx, "ready")
	require.NoError(t, err)

	require.NoError(t, p.Signal(syscall.SIGTERM))
	require.NoError(t, p.Wait())
	require.Equal(t, 0, p.ExitCode())
	require.Contains(t, p.Output(), "got SIGTERM, bye")
	require.NoError(t, p.Stop(), "stopping an exited process does nothing")
}

func TestChromium(t *testing.T) {
	t.Parallel()
	path := testenv.Chromium(t)
	require.FileExists(t, path)
}

func TestFreePortAndWaitFor(t *testing.T) {
	t.Parallel()
	require.NotEqual(t, testenv.FreePort(t), testenv.FreePort(t))

	calls := 0
	testenv.WaitFor(t, 5*time.Second, func() (bool, error) {
		calls++
		if calls < 3 {
			return false, errors.New("not yet")
		}
		return true, nil
	}, "third call")
	require.Equal(t, 3, calls)
}

// TestMostAtOnce: the sweep counts the intervals that hold at one
// instant, an end before a start at the same instant, and refuses an
// interval that ends before it starts.
func TestMostAtOnce(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("mysql", testenv.MySQL(t))
	require.NoError(t, err)
	defer db.Close()
	most := func(q string) (int, error) { return testenv.MostAtOnce(db, q) }
	n, err := most(`SELECT 1, 5 UNION ALL SELECT 5, 7 UNION ALL SELECT 2, 6 UNION ALL SELECT 3, 4`)
	require.NoError(t, err)
	require.Equal(t, 3, n, "[1,5), [2,6) and [3,4) at 3; [5,7) starts as [1,5) ends")
	n, err = most(`SELECT 1, 2 UNION ALL SELECT 2, 3 UNION ALL SELECT 3, 4`)
	require.NoError(t, err)
	require.Equal(t, 1, n, "back to back: one at a time")
	_, err = most(`SELECT 5, 4`)
	require.Error(t, err)
}

// TestStartPostgreSQLSurvivesKill: a private PostgreSQL server keeps a
// committed row through kill -9 and a restart, and through a clean stop.
func TestStartPostgreSQLSurvivesKill(t *testing.T) {
	t.Parallel()
	p := testenv.StartPostgreSQL(t)
	ctx := context.Background()
	if err := p.CreateDatabase(ctx, "sj"); err != nil {
		t.Fatal(err)
	}
	run := func(q string) {
		t.Helper()
		db, err := sql.Open("pgx", p.DSN("sj"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	count := func() int {
		t.Helper()
		db, err := sql.Open("pgx", p.DSN("sj"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	run("CREATE TABLE t (id int)")
	run("INSERT INTO t VALUES (1)")
	pid := p.PID()
	if pid == 0 {
		t.Fatal("no pid")
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if p.PID() != 0 {
		t.Fatal("still running after Kill")
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	run("INSERT INTO t VALUES (2)")
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d rows after kill -9 and a restart, want 2", n)
	}
}
