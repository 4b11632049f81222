package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/internal/testenv"
	admine2e "github.com/shardjob/shardjob/internal/testenv/cluster"
	"github.com/shardjob/shardjob/sdk/protocol"
)

const (
	adminPkg    = "github.com/shardjob/shardjob/admin/cmd/shardjob-admin"
	executorPkg = "github.com/shardjob/shardjob/executor/cmd/shardjob-executor"

	platformDB = "shardjob"
	businessDB = "business"
	app        = "records-chaos"

	// heartbeat is the admin's and the executors' heartbeat interval; an
	// executor silent for lostAfter is lost.
	heartbeat = 500 * time.Millisecond
	lostAfter = 3 * heartbeat
	capacity  = 4

	// idleTxTimeout (seconds, MariaDB's idle_transaction_timeout on the
	// executors' business connections) ends the open transaction of a
	// frozen executor, so that a newer token can take its slot's lock.
	idleTxTimeout = 2

	// retryMax is the jobs' retry_max.
	retryMax = 3

	// Deadlines: binaries built with -race on a 2-core machine.
	startDeadline = 90 * time.Second
	waitDeadline  = 120 * time.Second
)

var passwordRE = regexp.MustCompile(`with password (\S+)`)

// cluster is the system under test and the test's view of it.
type cluster struct {
	t       *testing.T
	db      *testenv.MariaDB
	biz     *sql.DB // the test's own pool on the business database
	execBin string
	secret  string
	bizDSN  string           // what the executors get as --demo-db-dsn
	admin   *testenv.Process // the first admin, which leads
	api     *admine2e.Client
	execs   []*executor // every executor process started, in order
	// how to start more admin replicas (startAdmin)
	adminBin, zk, zkRoot string
	// admins is the --admins list executors get; default the first admin
	admins string
}

// executor is one shardjob-executor process.
type executor struct {
	name   string // --instance-id
	log    string // the name of its output file (keepOutput)
	url    string // where it listens for pushes from the admin
	proc   *testenv.Process
	id     int64 // the admin's id, once seen online
	killed bool
	paused bool
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	start := time.Now()
	c := &cluster{
		t:       t,
		db:      testenv.StartMariaDB(t),
		execBin: testenv.BuildBinary(t, executorPkg),
		secret:  protocol.NewSecret(),
	}
	adminBin := testenv.BuildBinary(t, adminPkg)
	zk := testenv.ZooKeeper(t)

	root, err := sql.Open("mysql", c.db.DSN(""))
	require.NoError(t, err)
	for _, q := range []string{
		"CREATE DATABASE " + platformDB + " CHARACTER SET utf8mb4",
		"CREATE DATABASE " + businessDB + " CHARACTER SET utf8mb4",
	} {
		if _, err = root.Exec(q); err != nil {
			break
		}
	}
	require.NoError(t, root.Close())
	require.NoError(t, err)

	cfg, err := mysql.ParseDSN(c.db.DSN(businessDB))
	require.NoError(t, err)
	cfg.MultiStatements = false
	cfg.Params = map[string]string{"idle_transaction_timeout": strconv.Itoa(idleTxTimeout)}
	c.bizDSN = cfg.FormatDSN()

	// The test's pool must fail fast while MariaDB is down.
	cfg, err = mysql.ParseDSN(c.db.DSN(businessDB))
	require.NoError(t, err)
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = time.Second, 30*time.Second, 10*time.Second
	c.biz, err = sql.Open("mysql", cfg.FormatDSN())
	require.NoError(t, err)
	c.biz.SetMaxOpenConns(4)
	t.Cleanup(func() { _ = c.biz.Close() }) // before StartMariaDB's cleanup stops the server

	c.adminBin, c.zk, c.zkRoot = adminBin, zk, testenv.ZKChroot(t)
	var url string
	c.admin, url = c.startAdmin("admin")
	_, err = c.admin.WaitForLine(c.ctx(startDeadline), "msg=leading")
	require.NoError(t, err)
	m := passwordRE.FindStringSubmatch(c.admin.Stdout())
	require.NotNil(t, m, "the first start prints the console password")
	c.api = admine2e.NewClient(url)
	require.NoError(t, c.api.Login("admin", m[1]))
	t.Logf("cluster: MariaDB %s (pid %d), admin at %s, ready in %s", c.db.Addr(), c.db.PID(), url, time.Since(start).Round(time.Millisecond))
	return c
}

// startAdmin starts a `shardjob-admin serve` replica of the cluster (same
// database, ZooKeeper chroot and secret) named name, waits until it
// serves, and returns it with its base URL. The first one started leads.
func (c *cluster) startAdmin(name string) (*testenv.Process, string) {
	c.t.Helper()
	port := strconv.Itoa(testenv.FreePort(c.t))
	var p *testenv.Process
	c.keepOutput(&p, name)
	p = testenv.StartProcess(c.t, c.adminBin, []string{
		"serve", "--db-driver", "mysql", "--db-dsn", c.db.DSN(platformDB),
		"--zk", c.zk, "--zk-root", c.zkRoot,
		"--http-addr", "127.0.0.1:" + port, "--id", "records-chaos-" + name,
		"--heartbeat-interval", heartbeat.String(),
	}, []string{"SHARDJOB_EXECUTOR_SECRET=" + c.secret})
	_, err := p.WaitForLine(c.ctx(startDeadline), "serving at")
	require.NoError(c.t, err)
	return p, "http://127.0.0.1:" + port
}

// envLogDir names a directory that receives the whole output of every
// process the test started (testenv reports only the last lines, and only
// when the test failed).
const envLogDir = "SHARDJOB_CHAOS_LOG_DIR"

// keepOutput copies the output of *p to $SHARDJOB_CHAOS_LOG_DIR/name.log
// when the test ends, if the variable is set. Call it before starting the
// process, so that the copy is made after the process was stopped.
func (c *cluster) keepOutput(p **testenv.Process, name string) {
	dir := os.Getenv(envLogDir)
	if dir == "" {
		return
	}
	c.t.Cleanup(func() {
		if *p == nil {
			return
		}
		err := os.MkdirAll(dir, 0o755)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name+".log"), []byte((*p).Output()), 0o644)
		}
		if err != nil {
			c.t.Logf("%s: cannot keep the output of %s: %v", envLogDir, name, err)
		}
	})
}

// ctx returns a context that ends after d or with the test.
func (c *cluster) ctx(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	c.t.Cleanup(cancel)
	return ctx
}

// startExecutor starts an executor of the app on the business database
// and waits until it listens (not until the admin knows it: waitOnline).
func (c *cluster) startExecutor() *executor {
	c.t.Helper()
	name := fmt.Sprintf("ex%d", len(c.execs)+1)
	return c.startNamed(&executor{name: name, log: name})
}

// restartExecutor starts a new process under the instance id of e, whose
// process the test killed, and waits until it listens. The admin knows it
// as e (same id); its output is kept as <name>-<n>.log.
func (c *cluster) restartExecutor(e *executor) *executor {
	c.t.Helper()
	return c.startNamed(&executor{name: e.name, log: fmt.Sprintf("%s-%d", e.name, len(c.execs)+1), id: e.id})
}

func (c *cluster) startNamed(e *executor) *executor {
	c.t.Helper()
	admins := c.admins
	if admins == "" {
		admins = c.api.Base
	}
	c.keepOutput(&e.proc, e.log)
	e.proc = testenv.StartProcess(c.t, c.execBin, []string{
		"--app", app, "--admins", admins, "--capacity", strconv.Itoa(capacity),
		"--heartbeat-interval", heartbeat.String(), "--instance-id", e.name, "--drain-timeout", "2s",
		"--log-level", "debug", // the tests audit slot starts from the "slot started" lines
		"--demo-db-dsn", c.bizDSN,
	}, []string{"SHARDJOB_SECRET=" + c.secret})
	// A frozen process would make the cleanup's SIGTERM wait for nothing.
	c.t.Cleanup(func() {
		if e.paused {
			_ = e.proc.Signal(syscall.SIGCONT)
		}
	})
	line, err := e.proc.WaitForLine(c.ctx(startDeadline), "listening at")
	require.NoError(c.t, err)
	e.url = line[strings.LastIndex(line, " ")+1:]
	c.execs = append(c.execs, e)
	return e
}

// waitOnline waits until the admin lists every one of execs as online.
func (c *cluster) waitOnline(execs ...*executor) {
	c.t.Helper()
	testenv.WaitFor(c.t, startDeadline, func() (bool, error) {
		list, err := c.executors()
		if err != nil {
			return false, err
		}
		for _, e := range execs {
			v, ok := list[e.name]
			if !ok || v.State != "online" {
				return false, fmt.Errorf("executor %s is not online: %+v", e.name, v)
			}
			e.id = v.ID
		}
		return true, nil
	}, "executors did not come online")
}

// alive returns the executors neither killed nor paused.
func (c *cluster) alive() []*executor {
	var out []*executor
	for _, e := range c.execs {
		if !e.killed && !e.paused {
			out = append(out, e)
		}
	}
	return out
}

type executorView struct {
	ID         int64  `json:"id"`
	InstanceID string `json:"instance_id"`
	State      string `json:"state"`
}

func (c *cluster) executors() (map[string]executorView, error) {
	var out struct {
		Executors []executorView `json:"executors"`
	}
	if err := c.get("/api/v1/executors", &out); err != nil {
		return nil, err
	}
	m := map[string]executorView{}
	for _, e := range out.Executors {
		m[e.InstanceID] = e
	}
	return m, nil
}

func (c *cluster) get(path string, out any) error {
	code, err := c.api.Do(http.MethodGet, path, nil, out)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", path, code)
	}
	return nil
}

// createJob creates a disabled job (it runs only when triggered) of 256
// slots and returns its id.
func (c *cluster) createJob(name, handler, params string) int64 {
	c.t.Helper()
	enabled := false
	var job struct {
		ID int64 `json:"id"`
	}
	code, err := c.api.Do(http.MethodPost, "/api/v1/jobs", map[string]any{
		"app": app, "name": name, "handler": handler, "cron": "0 0 1 1 *",
		"slots": slots, "params": params, "enabled": &enabled,
		// A slot failed by the database outage is retried by the admin.
		"retry_max": retryMax, "retry_backoff_ms": 1000,
	}, &job)
	require.NoError(c.t, err)
	require.Equal(c.t, http.StatusCreated, code)
	return job.ID
}

type runView struct {
	ID             int64     `json:"id"`
	JobID          int64     `json:"job_id"`
	Status         string    `json:"status"`
	ScheduledAt    time.Time `json:"scheduled_at"`
	Slots          int       `json:"slots"`
	SlotsSucceeded int       `json:"slots_succeeded"`
	SlotsFailed    int       `json:"slots_failed"`
	Error          string    `json:"error"`
}

type attemptView struct {
	Token      int64  `json:"token"`
	Slot       int    `json:"slot"`
	Attempt    int    `json:"attempt"`
	ExecutorID *int64 `json:"executor_id"`
	Status     string `json:"status"`
	Current    bool   `json:"current"`
	Processed  int64  `json:"processed"`
	Skipped    int64  `json:"skipped"`
	Failed     int64  `json:"failed"`
	Uncertain  int64  `json:"uncertain"`
	Error      string `json:"error"`
}

func (a attemptView) executor() int64 {
	if a.ExecutorID == nil {
		return 0
	}
	return *a.ExecutorID
}

func (a attemptView) String() string {
	return fmt.Sprintf("token %d (slot %d, attempt %d, executor %d): %s current=%v processed=%d skipped=%d failed=%d uncertain=%d %s",
		a.Token, a.Slot, a.Attempt, a.executor(), a.Status, a.Current, a.Processed, a.Skipped, a.Failed, a.Uncertain, a.Error)
}

// trigger starts a run of the job. With at set, it asks for the firing of
// that instant: a repeat returns the existing run (created false).
func (c *cluster) trigger(jobID int64, at *time.Time) (runView, bool) {
	c.t.Helper()
	var in any
	if at != nil {
		in = map[string]any{"scheduled_at": at}
	}
	var out struct {
		Run     runView `json:"run"`
		Created bool    `json:"created"`
	}
	code, err := c.api.Do(http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/trigger", jobID), in, &out)
	require.NoError(c.t, err)
	if out.Created {
		require.Equal(c.t, http.StatusCreated, code)
	} else {
		require.Equal(c.t, http.StatusOK, code)
	}
	return out.Run, out.Created
}

// run returns a run and every attempt of every slot.
func (c *cluster) run(id int64) (runView, []attemptView, error) {
	var out struct {
		Run      runView       `json:"run"`
		Attempts []attemptView `json:"attempts"`
	}
	err := c.get(fmt.Sprintf("/api/v1/runs/%d", id), &out)
	return out.Run, out.Attempts, err
}

var terminal = map[string]bool{"succeeded": true, "failed": true, "partially_failed": true, "cancelled": true}

// waitRunEnded waits until the run is terminal.
func (c *cluster) waitRunEnded(id int64) (runView, []attemptView) {
	c.t.Helper()
	var r runView
	var atts []attemptView
	testenv.WaitFor(c.t, waitDeadline, func() (bool, error) {
		var err error
		r, atts, err = c.run(id)
		if err != nil {
			return false, err
		}
		if terminal[r.Status] {
			return true, nil
		}
		byStatus := map[string]int{}
		for _, a := range atts {
			if a.Current {
				byStatus[a.Status]++
			}
		}
		return false, fmt.Errorf("run %d is %s (%d/%d slots succeeded, %d failed); current attempts by status %v",
			id, r.Status, r.SlotsSucceeded, r.Slots, r.SlotsFailed, byStatus)
	}, fmt.Sprintf("run %d did not end", id))
	return r, atts
}

// finishRun waits until the run ended; when slots failed (the database
// outage can use up a slot's retries) it retries the run through the API,
// as an operator would, up to 3 times. It returns the run, its attempts
// and the number of retries it needed.
func (c *cluster) finishRun(id int64) (runView, []attemptView, int) {
	c.t.Helper()
	for retries := 0; ; retries++ {
		r, atts := c.waitRunEnded(id)
		if r.Status == "succeeded" || retries == 3 {
			return r, atts, retries
		}
		failed := map[string]int{}
		for _, a := range atts {
			if a.Current && a.Status != "succeeded" {
				failed[firstLine(a.Error)]++
			}
		}
		c.t.Logf("run %d ended %s (%d of %d slots failed: %v): POST /api/v1/runs/%d/retry", id, r.Status, r.SlotsFailed, r.Slots, failed, id)
		c.reportRetryBudget(id, atts)
		var out struct {
			RetriedSlots int `json:"retried_slots"`
		}
		code, err := c.api.Do(http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/retry", id), nil, &out)
		require.NoError(c.t, err)
		require.Equal(c.t, http.StatusOK, code, "retry of run %d", id)
		require.Equal(c.t, r.SlotsFailed, out.RetriedSlots, "the retry gives every failed slot a new attempt")
	}
}

// waitAttempts waits until cond holds for the run's attempts, and returns
// them.
func (c *cluster) waitAttempts(runID int64, what string, cond func(atts []attemptView) error) []attemptView {
	c.t.Helper()
	var atts []attemptView
	testenv.WaitFor(c.t, waitDeadline, func() (bool, error) {
		var err error
		if _, atts, err = c.run(runID); err != nil {
			return false, err
		}
		if err := cond(atts); err != nil {
			return false, err
		}
		return true, nil
	}, what)
	return atts
}

// current returns the current attempt of every slot.
func current(atts []attemptView) map[int]attemptView {
	m := map[int]attemptView{}
	for _, a := range atts {
		if a.Current {
			m[a.Slot] = a
		}
	}
	return m
}

// on returns the current attempts placed on executor e with one of the
// given statuses (all when none is given).
func on(atts []attemptView, e *executor, statuses ...string) []attemptView {
	var out []attemptView
	for _, a := range atts {
		if !a.Current || a.executor() != e.id {
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

func tokens(atts []attemptView) []int64 {
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

// logLine is one line of slog text output, as key/value attributes.
type logLine map[string]string

var attrRE = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.]*)=("(?:[^"\\]|\\.)*"|\S*)`)

// logLines returns the lines of p's output whose msg is msg.
func logLines(p *testenv.Process, msg string) []logLine {
	return parseLines(p.Output(), "", msg)[msg]
}

// parseLines parses the lines of output that contain filter and whose msg
// is one of msgs, by msg. One snapshot of the output gives a consistent
// view of several messages.
func parseLines(output, filter string, msgs ...string) map[string][]logLine {
	out := map[string][]logLine{}
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
		l := logLine{}
		for _, m := range attrRE.FindAllStringSubmatch(raw, -1) {
			v := m[2]
			if strings.HasPrefix(v, `"`) {
				if u, err := strconv.Unquote(v); err == nil {
					v = u
				}
			}
			if _, seen := l[m[1]]; !seen {
				l[m[1]] = v
			}
		}
		if l["msg"] == msg {
			out[msg] = append(out[msg], l)
		}
	}
	return out
}

func (l logLine) time() time.Time {
	at, _ := time.Parse(time.RFC3339Nano, l["time"])
	return at
}

func (l logLine) int(key string) int64 {
	n, _ := strconv.ParseInt(l[key], 10, 64)
	return n
}
