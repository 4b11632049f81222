package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
	"github.com/shardjob/shardjob/sdk/protocol"
)

const (
	platformDB = "shardjob"
	businessDB = "business"
	app        = "records-chaos"

	// heartbeat is the admin's and the executors' heartbeat interval; an
	// executor silent for lostAfter is lost.
	heartbeat = 500 * time.Millisecond
	lostAfter = 3 * heartbeat
	capacity  = 4

	// idleTxTimeout (MariaDB's idle_transaction_timeout, PostgreSQL's
	// idle_in_transaction_session_timeout on the executors' business
	// connections) ends the open transaction of a frozen executor, so that
	// a newer token can take its slot's lock.
	idleTxTimeout = 2 * time.Second

	// retryMax is the jobs' retry_max.
	retryMax = 3

	// Deadlines: binaries built with -race on a 2-core machine.
	startDeadline = 90 * time.Second
	waitDeadline  = 120 * time.Second
)

// cluster is the system under test and the test's view of it.
type cluster struct {
	*harness.Cluster
	t      *testing.T
	db     business // the private server of both databases
	biz    *sql.DB  // the test's own pool on the business database
	bizDSN string   // what the executors get as --demo-db-dsn
}

// envLogDir names a directory that receives the whole output of every
// process the test started (testenv reports only the last lines, and only
// when the test failed).
const envLogDir = "SHARDJOB_CHAOS_LOG_DIR"

// newCluster starts the private database server (startMariaDB or
// startPostgreSQL) and an admin on it.
func newCluster(t *testing.T, startDB func(testing.TB) business) *cluster {
	t.Helper()
	start := time.Now()
	c := &cluster{t: t, db: startDB(t)}
	driver, platformDSN, bizDSN := c.db.setup(t)
	c.bizDSN = bizDSN

	// The test's pool must fail fast while the server is down.
	c.biz = c.db.testPool(t)
	c.biz.SetMaxOpenConns(4)
	t.Cleanup(func() { _ = c.biz.Close() }) // before the server's cleanup stops it

	// The first admin leads; StartAdmin adds replicas of it (same
	// database, ZooKeeper chroot and secret).
	logDir := os.Getenv(envLogDir)
	c.Cluster = harness.New(t, "admin", harness.AdminOpts{
		ID: "records-chaos-{name}",
		Args: []string{
			"--db-driver", driver, "--db-dsn", platformDSN,
			"--zk", testenv.ZooKeeper(t), "--zk-root", testenv.ZKChroot(t),
			"--heartbeat-interval", heartbeat.String(),
		},
		Secret: protocol.NewSecret(), StartTimeout: startDeadline, LogDir: logDir,
	})
	c.Exec = harness.ExecutorOpts{
		App: app, Capacity: capacity, Heartbeat: heartbeat, DrainTimeout: 2 * time.Second,
		LogLevel: "debug", // the tests audit slot starts from the "slot started" lines
		Args:     []string{"--demo-db-dsn", c.bizDSN},
		LogDir:   logDir,
	}
	c.WaitTimeout = waitDeadline
	t.Logf("cluster: %s %s (pid %d), admin at %s, ready in %s", c.db.name(), c.db.server().Addr(), c.db.server().PID(), c.API.Base, time.Since(start).Round(time.Millisecond))
	return c
}

// startExecutor starts an executor of the app on the business database
// and waits until it listens (not until the admin knows it: WaitOnline).
func (c *cluster) startExecutor() *harness.Executor {
	c.t.Helper()
	name := fmt.Sprintf("ex%d", len(c.Execs())+1)
	return c.StartExecutor(harness.ExecutorOpts{InstanceID: name})
}

// restartExecutor starts a new process under the instance id of e, whose
// process the test killed, and waits until it listens. The admin knows it
// as e (same id); its output is kept as <name>-<n>.log.
func (c *cluster) restartExecutor(e *harness.Executor) *harness.Executor {
	c.t.Helper()
	again := c.StartExecutor(harness.ExecutorOpts{InstanceID: e.Name, LogName: fmt.Sprintf("%s-%d", e.Name, len(c.Execs())+1)})
	again.ID = e.ID
	return again
}

// alive returns the executors neither killed nor frozen.
func (c *cluster) alive() []*harness.Executor {
	var out []*harness.Executor
	for _, e := range c.Execs() {
		if !e.Killed() && !e.Frozen() {
			out = append(out, e)
		}
	}
	return out
}

// createJob creates a disabled job (it runs only when triggered) of 256
// slots and returns its id.
func (c *cluster) createJob(name, handler, params string) int64 {
	c.t.Helper()
	enabled := false
	return c.CreateJob(apitypes.JobSpec{JobDef: apitypes.JobDef{
		App: app, Name: name, Handler: handler, Cron: "0 0 1 1 *",
		SlotCount: slots, Params: params, Enabled: &enabled,
		// A slot failed by the database outage is retried by the admin.
		RetryMax: retryMax, RetryBackoffMS: 1000,
	}})
}

// trigger starts a run of the job. With at set, it asks for the firing of
// that instant: a repeat returns the existing run (created false).
func (c *cluster) trigger(jobID int64, at *time.Time) (apitypes.Run, bool) {
	c.t.Helper()
	if at != nil {
		return c.Trigger(jobID, map[string]any{"scheduled_at": at})
	}
	return c.Trigger(jobID, nil)
}

// finishRun waits until the run ended; when slots failed (the database
// outage can use up a slot's retries) it retries the run through the API,
// as an operator would, up to 3 times. It returns the run, its attempts
// and the number of retries it needed.
func (c *cluster) finishRun(id int64) (apitypes.Run, []apitypes.Attempt, int) {
	c.t.Helper()
	for retries := 0; ; retries++ {
		r, atts := c.WaitRunEnded(id, nil)
		if r.Status == "succeeded" || retries == 3 {
			return r, atts, retries
		}
		failed := map[string]int{}
		for _, a := range atts {
			if a.Current && a.Status != "succeeded" {
				failed[firstLine(a.Error)]++
			}
		}
		c.t.Logf("run %d ended %s (%d of %d slots failed: %v): POST /api/v1/runs/%d/retry", id, r.Status, r.SlotsFailed, r.SlotCount, failed, id)
		c.reportRetryBudget(id, atts)
		var out struct {
			RetriedSlots int `json:"retried_slots"`
		}
		code, err := c.API.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/retry", id), nil, &out)
		require.NoError(c.t, err)
		require.Equal(c.t, http.StatusOK, code, "retry of run %d", id)
		require.Equal(c.t, r.SlotsFailed, out.RetriedSlots, "the retry gives every failed slot a new attempt")
	}
}

// on returns the current attempts placed on executor e with one of the
// given statuses (all when none is given).
func on(atts []apitypes.Attempt, e *harness.Executor, statuses ...string) []apitypes.Attempt {
	var out []apitypes.Attempt
	for _, a := range atts {
		if !a.Current || harness.ExecutorOf(a) != e.ID {
			continue
		}
		if len(statuses) == 0 || contains(statuses, a.Status) {
			out = append(out, a)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func tokens(atts []apitypes.Attempt) []int64 {
	out := make([]int64, 0, len(atts))
	for _, a := range atts {
		out = append(out, a.Token)
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// harness.LogLines returns the lines of p's output whose msg is msg.
func logLines(p *testenv.Process, msg string) []harness.LogLine {
	return parseLines(p.Output(), "", msg)[msg]
}

// parseLines parses the lines of output that contain filter and whose msg
// is one of msgs, by msg. One snapshot of the output gives a consistent
// view of several messages.
func parseLines(output, filter string, msgs ...string) map[string][]harness.LogLine {
	out := map[string][]harness.LogLine{}
	for _, raw := range strings.Split(output, "\n") {
		if !strings.Contains(raw, filter) {
			continue
		}
		var msg string
		for _, m := range msgs {
			if strings.Contains(raw, m) {
				msg = m
				break
			}
		}
		if msg == "" {
			continue
		}
		if l := harness.ParseLine(raw); l.Msg() == msg {
			out[msg] = append(out[msg], l)
		}
	}
	return out
}
