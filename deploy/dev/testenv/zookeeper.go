package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	zkStartTimeout = 60 * time.Second
	zkStopTimeout  = 15 * time.Second
	zkMainClass    = "org.apache.zookeeper.server.ZooKeeperServerMain" // standalone server
)

// zkJars is the classpath of Debian's zookeeper package: zookeeper.jar names
// its dependencies in its manifest; slf4j-simple makes it log to stderr.
var zkJars = []string{"/usr/share/java/zookeeper.jar", "/usr/share/java/slf4j-simple.jar"}

// ZK is a private standalone ZooKeeper server on 127.0.0.1, started as a
// child JVM. Its data directory survives Stop/Kill and Start, so persistent
// znodes do too.
type ZK struct {
	port int
	srv  *server
}

// ZooKeeper returns "127.0.0.1:port" of a ZooKeeper server for the test:
// SHARDJOB_TEST_ZK if set, else a private server started once per test
// process and shared by its tests (stopped by Main). Tests sharing a server
// should keep their znodes under their own ZKChroot.
//
// The private server has tickTime 500ms and minSessionTimeout 1000ms, so
// tests can use short sessions, and accepts every four-letter word.
func ZooKeeper(t testing.TB) string {
	t.Helper()
	requireMain(t, "testenv.ZooKeeper")
	if v := strings.TrimSpace(os.Getenv(EnvZK)); v != "" {
		addr, err := externalZK.get(func() (string, error) {
			conn, err := net.DialTimeout("tcp", v, 2*time.Second)
			if err != nil {
				return "", fmt.Errorf("testenv: the ZooKeeper server in %s (%s) does not answer: %w", EnvZK, v, err)
			}
			conn.Close()
			return v, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return addr
	}
	z, err := sharedZK.get(func() (*ZK, error) {
		pdir, err := processDir()
		if err != nil {
			return nil, err
		}
		start := time.Now()
		z, err := newZK(filepath.Join(pdir, "zookeeper"))
		if err != nil {
			return nil, err
		}
		onTeardown(z.Stop)
		t.Logf("testenv: private ZooKeeper for the tests of this process on %s (pid %d, started in %s)",
			z.Addr(), z.PID(), time.Since(start).Round(time.Millisecond))
		return z, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return z.Addr()
}

var (
	externalZK lazy[string]
	sharedZK   lazy[*ZK]
)

// StartZooKeeper starts a private ZooKeeper for the calling test, for tests
// that stop, kill or restart it. It is stopped (SIGTERM, then SIGKILL after
// 15s) and its directory removed when the test ends; with
// SHARDJOB_TEST_KEEP=1 the directory is kept and its path logged.
func StartZooKeeper(t testing.TB) *ZK {
	t.Helper()
	return startPrivate(t, "ZooKeeper", "sjt-zk-", func(dir string) (*ZK, *server, error) {
		z, err := newZK(dir)
		if z == nil {
			return nil, nil, err
		}
		return z, z.srv, err
	})
}

// Addr returns "127.0.0.1:port".
func (z *ZK) Addr() string { return "127.0.0.1:" + strconv.Itoa(z.port) }

// PID returns the pid of the running JVM, or 0 when it is not running.
func (z *ZK) PID() int { return z.srv.pid() }

// LogPath returns the server log (all runs, appended).
func (z *ZK) LogPath() string { return z.srv.logPath }

// Stop shuts ZooKeeper down with SIGTERM, and kills it if it did not exit
// within 15s (returning an error). Stopping a stopped server does nothing.
func (z *ZK) Stop() error { return z.srv.stop() }

// Kill sends SIGKILL to the JVM and waits until it is gone. It fails if the
// server is not running.
func (z *ZK) Kill() error { return z.srv.kill() }

// Start starts the stopped or killed server again on the same port and data
// directory and waits until it answers ruok with imok and serves requests.
// Sessions that expired meanwhile stay expired.
func (z *ZK) Start() error { return z.srv.start() }

func newZK(dir string) (*ZK, error) {
	java, err := findJava()
	if err != nil {
		return nil, err
	}
	classpath, err := zkClasspath()
	if err != nil {
		return nil, err
	}
	for _, sub := range []string{"data", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	cfgPath := filepath.Join(dir, "zoo.cfg")
	logPath := filepath.Join(dir, "zookeeper.log")
	z := &ZK{}
	z.srv = &server{
		name:         "zookeeper",
		addr:         z.Addr,
		logPath:      logPath,
		startTimeout: zkStartTimeout,
		stopTimeout:  zkStopTimeout,
		spec: func() procSpec {
			return procSpec{
				name: "zookeeper",
				path: java,
				args: []string{
					// Small and quick to start: tests run on 2-core machines.
					"-Xmx256m", "-Xms32m",
					"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
					"-XX:+ExitOnOutOfMemoryError",
					"-Djava.awt.headless=true",
					"-Djava.net.preferIPv4Stack=true",
					"-Djava.io.tmpdir=" + filepath.Join(dir, "tmp"),
					"-Dzookeeper.admin.enableServer=false",
					"-Dzookeeper.4lw.commands.whitelist=*",
					"-Dzookeeper.forceSync=no", // a killed JVM loses nothing; only an OS crash would
					"-Dzookeeper.jmx.log4j.disable=true",
					"-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
					"-Dorg.slf4j.simpleLogger.showDateTime=true",
					"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
					"-cp", classpath,
					zkMainClass, cfgPath,
				},
				logPath: logPath,
			}
		},
		ready: func(ctx context.Context) error { return zkReady(ctx, z.Addr()) },
	}
	for attempt := 1; ; attempt++ {
		if z.port, err = freePort(); err != nil {
			return nil, err
		}
		if err := writeZKConfig(cfgPath, filepath.Join(dir, "data"), z.port); err != nil {
			return nil, err
		}
		err = z.srv.start()
		var se *StartError
		if errors.As(err, &se) && se.addrInUse() && attempt < 3 {
			continue // another process took the port between FreePort and bind
		}
		if err != nil {
			return nil, err
		}
		return z, nil
	}
}

func writeZKConfig(path, dataDir string, port int) error {
	cfg := fmt.Sprintf(`tickTime=500
dataDir=%s
clientPortAddress=127.0.0.1
clientPort=%d
# every test connects from 127.0.0.1
maxClientCnxns=0
minSessionTimeout=1000
maxSessionTimeout=60000
admin.enableServer=false
4lw.commands.whitelist=*
`, dataDir, port)
	return os.WriteFile(path, []byte(cfg), 0o644)
}

func findJava() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java := filepath.Join(home, "bin", "java")
		if _, err := os.Stat(java); err == nil {
			return java, nil
		}
	}
	java, err := lookBinary("java")
	if err != nil {
		return "", fmt.Errorf("testenv: java not found (needed for ZooKeeper); run deploy/dev/ensure-deps.sh (Debian: apt-get install zookeeper): %w", err)
	}
	return java, nil
}

// zkClasspath returns SHARDJOB_TEST_ZK_CLASSPATH or the jars of Debian's
// zookeeper package that exist.
func zkClasspath() (string, error) {
	if cp := os.Getenv(EnvZKClass); cp != "" {
		return cp, nil
	}
	if _, err := os.Stat(zkJars[0]); err != nil {
		return "", fmt.Errorf("testenv: ZooKeeper is not installed (%w); run deploy/dev/ensure-deps.sh "+
			"(Debian: apt-get install zookeeper), set %s to its classpath, or set %s to a running server",
			err, EnvZKClass, EnvZK)
	}
	jars := []string{zkJars[0]}
	for _, jar := range zkJars[1:] {
		if _, err := os.Stat(jar); err == nil {
			jars = append(jars, jar)
		}
	}
	return strings.Join(jars, ":"), nil
}

// zkReady reports whether the server answers ruok with imok and reports a
// mode in srvr, which it does only once it serves requests.
func zkReady(ctx context.Context, addr string) error {
	out, err := fourLetterWord(ctx, addr, "ruok")
	if err != nil {
		return err
	}
	if out != "imok" {
		return fmt.Errorf("ruok answered %q, want imok", out)
	}
	out, err = fourLetterWord(ctx, addr, "srvr")
	if err != nil {
		return err
	}
	if !strings.Contains(out, "Mode: ") {
		return fmt.Errorf("srvr answered %q, without a mode", out)
	}
	return nil
}

// fourLetterWord sends a ZooKeeper four-letter command and returns the
// answer with surrounding white space removed.
func fourLetterWord(ctx context.Context, addr, cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", fmt.Errorf("%s: %w", cmd, err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		return "", fmt.Errorf("%s: %w", cmd, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// ZKChroot returns a path like "/sjt-1a2b3c4d5e6f", unique per call, under
// which a test keeps its znodes so that tests sharing a server do not see
// each other's. The node is not created.
func ZKChroot(t testing.TB) string {
	t.Helper()
	path, err := randomName("/sjt-", 6)
	if err != nil {
		t.Fatal(err)
	}
	return path
}
