package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// startAdmin runs `shardjob-admin serve` against MariaDB and ZooKeeper and
// returns it with a logged-in client.
func startAdmin(t *testing.T, dsn, zk, root, secret string) (*harness.Admin, *cli.Client) {
	t.Helper()
	a := serveAdmin(t, secret, "--db-driver", "mysql", "--db-dsn", dsn, "--zk", zk, "--zk-root", root, "--heartbeat-interval", "500ms")
	return a, a.Login(t)
}

// serveAdmin runs `shardjob-admin serve` with args on a free port of
// 127.0.0.1 and waits until it serves.
func serveAdmin(t *testing.T, secret string, args ...string) *harness.Admin {
	t.Helper()
	return harness.StartAdmin(t, harness.AdminOpts{ID: "e2e-admin-{port}", Args: args, Secret: secret, StartTimeout: 60 * time.Second})
}

func TestAdminAndExecutorBinariesRunAJob(t *testing.T) {
	t.Parallel()
	dsn := testenv.MySQL(t)
	zk := testenv.ZooKeeper(t)
	root := testenv.ZKChroot(t)
	secret := protocol.NewSecret()
	_, c := startAdmin(t, dsn, zk, root, secret)

	ex := harness.StartExecutor(t, harness.ExecutorOpts{
		App: "e2e", Admins: c.Base, Capacity: 3, Heartbeat: 500 * time.Millisecond, Secret: secret, StartTimeout: 60 * time.Second,
	})

	// The executor registers by heartbeat.
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		var out struct {
			Executors []struct {
				App   string `json:"app"`
				State string `json:"state"`
			} `json:"executors"`
		}
		if _, err := c.Call(context.Background(), http.MethodGet, "/api/v1/executors", nil, &out); err != nil {
			return false, err
		}
		return len(out.Executors) == 1 && out.Executors[0].State == "online", nil
	}, "executor did not register")

	// A job firing every second, 6 slots over one executor of capacity 3.
	var job struct {
		ID int64 `json:"id"`
	}
	code, err := c.Call(context.Background(), http.MethodPost, "/api/v1/jobs", map[string]any{
		"app": "e2e", "name": "every-second", "handler": "demo.hello", "cron": "* * * * * *",
		"time_zone": "Europe/Berlin", "slots": 6, "params": "records=10",
	}, &job)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)

	var succeeded apitypes.Run
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		var out struct{ Runs []apitypes.Run }
		if _, err := c.Call(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/runs?job_id=%d&status=succeeded&limit=1", job.ID), nil, &out); err != nil {
			return false, err
		}
		if len(out.Runs) == 0 {
			return false, nil
		}
		succeeded = out.Runs[0]
		return true, nil
	}, "no run of the job succeeded")
	require.Equal(t, 6, succeeded.SlotsSucceeded)
	require.Equal(t, "cron", succeeded.Trigger)
	require.Positive(t, succeeded.Epoch, "the run records the leader epoch that created it")

	var detail struct {
		Attempts []struct {
			Status    string `json:"status"`
			Processed int64  `json:"processed"`
		} `json:"attempts"`
	}
	_, err = c.Call(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", succeeded.ID), nil, &detail)
	require.NoError(t, err)
	require.Len(t, detail.Attempts, 6)
	for _, a := range detail.Attempts {
		require.Equal(t, "succeeded", a.Status)
		require.Equal(t, int64(10), a.Processed)
	}

	// Disable the cron job, then trigger it by hand with a parameter override.
	code, err = c.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/disable", job.ID), nil, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	var trig struct {
		Run     apitypes.Run `json:"run"`
		Created bool         `json:"created"`
	}
	code, err = c.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/trigger", job.ID), map[string]any{"params": "records=7"}, &trig)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	require.Equal(t, "manual", trig.Run.Trigger)
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		var out struct{ Run apitypes.Run }
		_, err := c.Call(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", trig.Run.ID), nil, &out)
		return out.Run.Status == "succeeded", err
	}, "manual run did not succeed")

	// Backfill of a given scheduled time is idempotent: the run key.
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, want := range []int{http.StatusCreated, http.StatusOK} {
		code, err = c.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/trigger", job.ID), map[string]any{"scheduled_at": at}, &trig)
		require.NoError(t, err)
		require.Equal(t, want, code, "backfill request %d", i)
	}

	// SIGTERM drains the executor: it deregisters (gone executors are
	// listed with all=1).
	require.NoError(t, ex.Stop())
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		var out struct {
			Executors []struct{ State string } `json:"executors"`
		}
		_, err := c.Call(context.Background(), http.MethodGet, "/api/v1/executors?all=1", nil, &out)
		return err == nil && len(out.Executors) == 1 && out.Executors[0].State == "gone", err
	}, "executor did not deregister on SIGTERM")
}

func TestStandaloneRunsTheDemoJob(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	port := testenv.FreePort(t)
	p := harness.StartStandalone(t, filepath.Join(dir, "data"), port)
	password := p.Password(t)
	c := harness.NewClient(p.URL)
	require.NoError(t, c.Login(context.Background(), "admin", password))
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		var out struct{ Runs []apitypes.Run }
		_, err := c.Call(context.Background(), http.MethodGet, "/api/v1/runs?status=succeeded&limit=1", nil, &out)
		return len(out.Runs) == 1 && out.Runs[0].SlotsSucceeded == 8, err
	}, "the demo job did not run")

	// The console page is served.
	res, err := http.Get(c.Base + "/")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)

	// A restart keeps the data and prints no new password.
	require.NoError(t, p.Stop())
	p2 := harness.StartStandalone(t, filepath.Join(dir, "data"), port)
	require.NotContains(t, p2.Stdout(), "with password")
	require.NoError(t, c.Login(context.Background(), "admin", password))
}

func TestBadConfigIsAOneLineErrorNamingTheSetting(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildBinary(t, harness.AdminPkg)
	secret := protocol.NewSecret()
	dsn := testenv.MySQL(t)
	zk := testenv.ZooKeeper(t)
	dead := testenv.FreePort(t)

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = busy.Close() })

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unreachable database", []string{"--db-dsn", fmt.Sprintf("root@tcp(127.0.0.1:%d)/x", dead), "--zk", zk}, "--db-dsn"},
		{"bad zookeeper address", []string{"--db-dsn", dsn, "--zk", fmt.Sprintf("127.0.0.1:%d", dead)}, "--zk"},
		{"port taken", []string{"--db-dsn", dsn, "--zk", zk, "--http-addr", busy.Addr().String()}, "--http-addr"},
		{"missing secret", []string{"--db-dsn", dsn, "--zk", zk, "--executor-secret", ""}, "--executor-secret"},
		{"unknown driver", []string{"--db-driver", "oracle", "--db-dsn", "x"}, "--db-driver"},
		{"trusted proxy not an address", []string{"--db-dsn", dsn, "--trusted-proxies", "10.0.0.1,lb.example"}, "--trusted-proxies"},
		{"every address a trusted proxy", []string{"--db-dsn", dsn, "--trusted-proxies", "0.0.0.0/0"}, "--trusted-proxies"},
		{"write timeout within the read timeout", []string{"--db-dsn", dsn, "--read-timeout", "30s", "--write-timeout", "10s"}, "--write-timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := []string{"SHARDJOB_EXECUTOR_SECRET=" + secret}
			args := append([]string{"serve", "--http-addr", "127.0.0.1:0", "--zk-root", testenv.ZKChroot(t)}, tc.args...)
			if tc.name == "missing secret" {
				env = nil
			}
			p := testenv.StartProcess(t, bin, args, env)
			select {
			case <-p.Done():
			case <-harness.Ctx(t, 60*time.Second).Done():
				t.Fatalf("admin did not exit: %s", p.Output())
			}
			require.Equal(t, 1, p.ExitCode(), p.Output())
			// stdout (the first start's password banner) and stderr (the
			// error) interleave in any order in the captured output: the
			// error is the one line of stderr's form.
			out := strings.TrimSpace(p.Output())
			var errLines []string
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "shardjob-admin: ") {
					errLines = append(errLines, line)
				}
			}
			require.Len(t, errLines, 1, out)
			require.Contains(t, errLines[0], "shardjob-admin: "+tc.want, out)
			require.NotContains(t, out, "goroutine ", "no stack trace")
			require.NotContains(t, out, "panic", "no panic")
		})
	}
}
