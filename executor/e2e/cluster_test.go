package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	admine2e "github.com/shardjob/shardjob/admin/e2e"
	"github.com/shardjob/shardjob/internal/testenv"
	"github.com/shardjob/shardjob/sdk"
	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	adminPkg    = "github.com/shardjob/shardjob/admin/cmd/shardjob-admin"
	executorPkg = "github.com/shardjob/shardjob/executor/cmd/shardjob-executor"

	// heartbeat is the heartbeat interval of the admin and the executors;
	// the admin declares an executor lost after lostAfter of silence.
	heartbeat = time.Second
	lostAfter = 3 * heartbeat

	// Deadlines are generous: binaries built with -race, on a 2-core
	// machine shared with other tests.
	startDeadline = 90 * time.Second
	runDeadline   = 120 * time.Second
)

var passwordRE = regexp.MustCompile(`with password (\S+)`)

// envLogDir names a directory that receives the whole output of every
// process a test started (testenv reports only the last lines, and only
// when the test failed).
const envLogDir = "SHARDJOB_E2E_LOG_DIR"

// keepOutput copies the output of the process *p to
// $SHARDJOB_E2E_LOG_DIR/<test>/<name>.log when the test ends, if the
// variable is set. Call it before starting the process, so that the copy is
// made after the process was stopped.
func keepOutput(t *testing.T, p **testenv.Process, name string) {
	dir := os.Getenv(envLogDir)
	if dir == "" {
		return
	}
	t.Cleanup(func() {
		if *p == nil {
			return
		}
		d := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_"))
		if err := os.MkdirAll(d, 0o755); err == nil {
			err = os.WriteFile(filepath.Join(d, name+".log"), []byte((*p).Output()), 0o644)
			if err == nil {
				return
			}
		}
		t.Logf("%s: cannot keep the output of %s in %s", envLogDir, name, d)
	})
}

// cluster is one admin replica and the executors a test started.
type cluster struct {
	t       *testing.T // the test its methods fail and clean up after
	execBin string
	secret  string
	admin   *testenv.Process
	api     *admine2e.Client
	n       *int // executors started, for instance ids
	// how to start more admin replicas of the same cluster (startReplica)
	adminBin, dsn, zk, root string
	adminArgs               []string // more flags for every replica
	// admins is the --admins list executors get; default the first admin
	admins string
}

// in returns the cluster for the subtest t: its methods fail t, and the
// processes they start are stopped when t ends.
func (c *cluster) in(t *testing.T) *cluster {
	cc := *c
	cc.t = t
	return &cc
}

// newCluster starts `shardjob-admin serve` on its own database and ZooKeeper
// chroot, waits until it leads, and logs in with the printed password.
func newCluster(t *testing.T) *cluster { t.Helper(); return newClusterWith(t) }

// newClusterWith is newCluster with more flags for every admin replica.
func newClusterWith(t *testing.T, adminArgs ...string) *cluster {
	t.Helper()
	dsn := testenv.MySQL(t)
	zk := testenv.ZooKeeper(t)
	root := testenv.ZKChroot(t)
	adminBin := testenv.BuildBinary(t, adminPkg)
	execBin := testenv.BuildBinary(t, executorPkg)
	secret := protocol.NewSecret()

	c := &cluster{t: t, execBin: execBin, secret: secret, n: new(int), adminBin: adminBin, dsn: dsn, zk: zk, root: root, adminArgs: adminArgs}
	admin, url := c.startReplica("admin")
	// The scheduler must run before the tests measure anything.
	_, err := admin.WaitForLine(deadline(t, startDeadline), "msg=leading")
	require.NoError(t, err)
	m := passwordRE.FindStringSubmatch(admin.Stdout())
	require.NotNil(t, m, "the first start prints the console password: %s", admin.Output())
	c.admin, c.api = admin, admine2e.NewClient(url)
	require.NoError(t, c.api.Login("admin", m[1]))
	return c
}

// startReplica starts one more `shardjob-admin serve` of the cluster (same
// database, ZooKeeper chroot and secret) and waits until it serves; it
// returns the process and its base URL.
func (c *cluster) startReplica(name string) (*testenv.Process, string) {
	c.t.Helper()
	port := strconv.Itoa(testenv.FreePort(c.t))
	var admin *testenv.Process
	keepOutput(c.t, &admin, name)
	admin = testenv.StartProcess(c.t, c.adminBin, append([]string{
		"serve", "--db-driver", "mysql", "--db-dsn", c.dsn, "--zk", c.zk, "--zk-root", c.root,
		"--http-addr", "127.0.0.1:" + port, "--id", "exec-e2e-" + port,
		"--heartbeat-interval", heartbeat.String(),
	}, c.adminArgs...), []string{"SHARDJOB_EXECUTOR_SECRET=" + c.secret})
	_, err := admin.WaitForLine(deadline(c.t, startDeadline), "serving at")
	require.NoError(c.t, err)
	return admin, "http://127.0.0.1:" + port
}

// deadline returns a context that ends after d or with the test.
func deadline(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// executor is a shardjob-executor process.
type executor struct {
	name string // its instance id
	app  string
	url  string // the address it listens at for pushes
	proc *testenv.Process
	id   int64 // the admin's id for it, once waitOnline saw it
}

// startExecutor starts an executor of app with the given capacity and the
// cluster's secret (or secret, when given) and waits until it listens. It
// does not wait until the admin knows it: see waitOnline.
func (c *cluster) startExecutor(app string, capacity int, secret ...string) *executor {
	c.t.Helper()
	*c.n++
	name := fmt.Sprintf("%s-ex%d", app, *c.n)
	s := c.secret
	if len(secret) > 0 {
		s = secret[0]
	}
	return c.startNamed(name, app, capacity, s)
}

// restartExecutor starts a new process under the instance id of e (whose
// process the test stopped) and waits until it listens.
func (c *cluster) restartExecutor(e *executor, capacity int) *executor {
	c.t.Helper()
	again := c.startNamed(e.name, e.app, capacity, c.secret)
	again.id = e.id
	return again
}

func (c *cluster) startNamed(name, app string, capacity int, s string) *executor {
	c.t.Helper()
	var p *testenv.Process
	keepOutput(c.t, &p, name)
	admins := c.admins
	if admins == "" {
		admins = c.api.Base
	}
	p = testenv.StartProcess(c.t, c.execBin, []string{
		"--app", app, "--admins", admins, "--capacity", strconv.Itoa(capacity),
		"--heartbeat-interval", heartbeat.String(), "--instance-id", name, "--drain-timeout", "2s",
		"--log-level", "debug", // the tests audit slot starts from the "slot started" lines
	}, []string{"SHARDJOB_SECRET=" + s})
	line, err := p.WaitForLine(deadline(c.t, startDeadline), "listening at")
	require.NoError(c.t, err)
	return &executor{name: name, app: app, url: line[strings.LastIndex(line, " ")+1:], proc: p}
}

// waitOnline waits until the admin lists every one of execs as online and
// records their ids.
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
	}, "executors did not register")
}

// executorView is an entry of GET /api/v1/executors.
type executorView struct {
	ID            int64     `json:"id"`
	InstanceID    string    `json:"instance_id"`
	App           string    `json:"app"`
	State         string    `json:"state"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
}

// executors returns the registered executors by instance id.
func (c *cluster) executors() (map[string]executorView, error) {
	var out struct {
		Executors []executorView `json:"executors"`
	}
	if err := c.get("/api/v1/executors", &out); err != nil {
		return nil, err
	}
	m := make(map[string]executorView, len(out.Executors))
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

// createJob creates a disabled job (it runs only when triggered) running
// demo.range over slots slots and returns its id.
func (c *cluster) createJob(app, name string, slots int, params string) int64 {
	c.t.Helper()
	enabled := false
	var job struct {
		ID int64 `json:"id"`
	}
	code, err := c.api.Do(http.MethodPost, "/api/v1/jobs", map[string]any{
		"app": app, "name": name, "handler": "demo.range", "cron": "0 0 1 1 *",
		"slots": slots, "params": params, "enabled": &enabled,
	}, &job)
	require.NoError(c.t, err)
	require.Equal(c.t, http.StatusCreated, code)
	return job.ID
}

// trigger starts a run of the job by hand and returns it.
func (c *cluster) trigger(jobID int64) runView {
	c.t.Helper()
	var out struct {
		Run runView `json:"run"`
	}
	code, err := c.api.Do(http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/trigger", jobID), nil, &out)
	require.NoError(c.t, err)
	require.Equal(c.t, http.StatusCreated, code)
	return out.Run
}

type runView struct {
	ID             int64     `json:"id"`
	Status         string    `json:"status"`
	Slots          int       `json:"slots"`
	SlotsSucceeded int       `json:"slots_succeeded"`
	SlotsFailed    int       `json:"slots_failed"`
	CreatedAt      time.Time `json:"created_at"`
	Error          string    `json:"error"`
}

type attemptView struct {
	Token      int64      `json:"token"`
	Slot       int        `json:"slot"`
	Attempt    int        `json:"attempt"`
	ExecutorID *int64     `json:"executor_id"`
	Status     string     `json:"status"`
	Current    bool       `json:"current"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Processed  int64      `json:"processed"`
	Error      string     `json:"error"`
}

func (a attemptView) executor() int64 {
	if a.ExecutorID == nil {
		return 0
	}
	return *a.ExecutorID
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

// settleGrace is how long a run may stay active after every current
// attempt of its slots has ended. The admin settles a run in the
// transaction that records its last result, so this is only slack for
// the API poll.
const settleGrace = 15 * time.Second

// waitRunEnded waits until the run is terminal and returns it with its
// attempts. It fails early, naming the problem, when every slot has ended
// but the run stays active.
func (c *cluster) waitRunEnded(id int64) (runView, []attemptView) {
	c.t.Helper()
	var r runView
	var atts []attemptView
	var allEndedAt time.Time // when every current attempt was first seen ended
	testenv.WaitFor(c.t, runDeadline, func() (bool, error) {
		var err error
		r, atts, err = c.run(id)
		if err != nil || terminal[r.Status] {
			return err == nil, err
		}
		status := map[string]int{}
		ended := len(atts) > 0
		for _, a := range atts {
			if a.Current {
				status[a.Status]++
				ended = ended && (a.Status == "succeeded" || a.Status == "failed" || a.Status == "cancelled")
			}
		}
		state := fmt.Errorf("run %d is %s (slots_succeeded=%d slots_failed=%d of %d); current attempts by status: %v",
			id, r.Status, r.SlotsSucceeded, r.SlotsFailed, r.Slots, status)
		switch {
		case !ended:
			allEndedAt = time.Time{}
		case allEndedAt.IsZero():
			allEndedAt = time.Now()
		case time.Since(allEndedAt) > settleGrace:
			c.t.Fatalf("run %d never settled: every slot ended %s ago but the run is still %s: %v",
				id, settleGrace, r.Status, state)
		}
		return false, state
	}, fmt.Sprintf("run %d did not end", id))
	return r, atts
}

// checkRunSucceeded asserts the outcome every test wants: the run
// succeeded, every slot has exactly one current attempt and it succeeded,
// every other attempt of a slot was superseded, and the current attempts
// processed records records in all. It returns the current attempt of
// each slot.
func checkRunSucceeded(t *testing.T, r runView, atts []attemptView, slots int, records int64) map[int]attemptView {
	t.Helper()
	require.Equal(t, "succeeded", r.Status, "run %d: %s", r.ID, r.Error)
	require.Equal(t, slots, r.SlotsSucceeded)
	current := map[int]attemptView{}
	var processed int64
	for _, a := range atts {
		require.True(t, a.Slot >= 0 && a.Slot < slots, "attempt of slot %d outside the run's %d slots", a.Slot, slots)
		if !a.Current {
			require.Contains(t, []string{"lost", "moved"}, a.Status, "a superseded attempt: %s", a)
			continue
		}
		prev, dup := current[a.Slot]
		require.False(t, dup, "slot %d has two current attempts: %s and %s", a.Slot, prev, a)
		require.Equal(t, "succeeded", a.Status, "current attempt of slot %d: %s", a.Slot, a)
		current[a.Slot] = a
		processed += a.Processed
	}
	require.Len(t, current, slots, "every slot has a current attempt")
	require.Equal(t, records, processed, "processed records over the current attempts")
	return current
}

// logLine is a line of slog text output.
type logLine struct {
	Time  time.Time
	Msg   string
	Attrs map[string]string
}

var kvRE = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.]*)=("(?:[^"\\]|\\.)*"|\S*)`)

// logLines returns the lines of p's output whose message starts with msg.
func logLines(p *testenv.Process, msg string) []logLine {
	var out []logLine
	for _, raw := range strings.Split(p.Output(), "\n") {
		if !strings.Contains(raw, msg) {
			continue
		}
		l := logLine{Attrs: map[string]string{}}
		for _, m := range kvRE.FindAllStringSubmatch(raw, -1) {
			v := m[2]
			if strings.HasPrefix(v, `"`) {
				if u, err := strconv.Unquote(v); err == nil {
					v = u
				}
			}
			if _, seen := l.Attrs[m[1]]; !seen {
				l.Attrs[m[1]] = v
			}
		}
		l.Msg = l.Attrs["msg"]
		if !strings.HasPrefix(l.Msg, msg) {
			continue
		}
		l.Time, _ = time.Parse(time.RFC3339Nano, l.Attrs["time"])
		out = append(out, l)
	}
	return out
}

// forRun keeps the lines tagged with the run.
func forRun(lines []logLine, runID int64) []logLine {
	var out []logLine
	id := strconv.FormatInt(runID, 10)
	for _, l := range lines {
		if l.Attrs["run_id"] == id {
			out = append(out, l)
		}
	}
	return out
}

// started returns the "slot started" lines of a run in p's output, by token.
func started(p *testenv.Process, runID int64) map[int64]logLine {
	m := map[int64]logLine{}
	for _, l := range forRun(logLines(p, "slot started"), runID) {
		tok, _ := strconv.ParseInt(l.Attrs["token"], 10, 64)
		m[tok] = l
	}
	return m
}

// rangeLine is the line demo.range logs for a finished slot.
type rangeLine struct {
	Slot          int
	Lo, Hi, Token int64
	Executor      string
	Time          time.Time
}

var rangeRE = regexp.MustCompile(`^range slot=(\d+) lo=(-?\d+) hi=(-?\d+) token=(\d+)$`)

// ranges returns the finished-slot lines of a run logged by execs.
func ranges(t *testing.T, runID int64, execs ...*executor) []rangeLine {
	t.Helper()
	var out []rangeLine
	for _, e := range execs {
		for _, l := range forRun(logLines(e.proc, "range slot="), runID) {
			m := rangeRE.FindStringSubmatch(l.Msg)
			require.NotNil(t, m, "malformed range line %q", l.Msg)
			r := rangeLine{Executor: e.name, Time: l.Time}
			r.Slot, _ = strconv.Atoi(m[1])
			r.Lo, _ = strconv.ParseInt(m[2], 10, 64)
			r.Hi, _ = strconv.ParseInt(m[3], 10, 64)
			r.Token, _ = strconv.ParseInt(m[4], 10, 64)
			out = append(out, r)
		}
	}
	return out
}

// checkCoverage asserts that the slots' accepted attempts (their current
// tokens) each logged their finished range once, and that these ranges
// cover the records 1..records exactly once. Lines of superseded tokens are
// left to checkStartedOnce.
func checkCoverage(t *testing.T, lines []rangeLine, current map[int]attemptView, slots int, records int64) {
	t.Helper()
	bySlot := map[int]rangeLine{}
	for _, l := range lines {
		if l.Token != current[l.Slot].Token {
			continue
		}
		prev, dup := bySlot[l.Slot]
		require.False(t, dup, "slot %d: token %d logged its range twice (%s and %s)", l.Slot, l.Token, prev.Executor, l.Executor)
		bySlot[l.Slot] = l
	}
	require.Len(t, bySlot, slots, "every slot's current attempt logged its finished range")
	next := int64(1) // the first record not covered yet
	for s := range slots {
		l := bySlot[s]
		lo, hi := sdk.IDRange(s, slots, 1, records)
		require.Equal(t, [2]int64{lo, hi}, [2]int64{l.Lo, l.Hi}, "slot %d range", s)
		if l.Lo > l.Hi {
			continue
		}
		require.Equal(t, next, l.Lo, "slot %d starts where slot %d ended", s, s-1)
		next = l.Hi + 1
	}
	require.Equal(t, records+1, next, "the ranges cover 1..%d", records)
}

// slotStart is a "slot started" line of an executor.
type slotStart struct {
	slot  int
	token int64
	exec  string
	at    time.Time
}

// startsOf returns the slot starts of the run logged by execs, leaving out
// the tokens in ignore.
func startsOf(runID int64, ignore map[int64]bool, execs ...*executor) []slotStart {
	var out []slotStart
	for _, e := range execs {
		for tok, l := range started(e.proc, runID) {
			if ignore[tok] {
				continue
			}
			s, _ := strconv.Atoi(l.Attrs["slot"])
			out = append(out, slotStart{s, tok, e.name, l.Time})
		}
	}
	return out
}

// checkStartedOnce asserts that no slot started twice: starts holds
// exactly one start per slot, for the slot's current token. only, when not
// nil, limits the check to some slots. The message of a failure lists every
// start of the slot with the status the admin gives that attempt.
func checkStartedOnce(t *testing.T, starts []slotStart, atts []attemptView, current map[int]attemptView, only map[int]bool) {
	t.Helper()
	status := map[int64]string{}
	for _, a := range atts {
		status[a.Token] = a.Status
	}
	bySlot := map[int][]slotStart{}
	for _, st := range starts {
		if only == nil || only[st.slot] {
			bySlot[st.slot] = append(bySlot[st.slot], st)
		}
	}
	var twice []string
	for s, starts := range bySlot {
		if len(starts) == 1 && starts[0].token == current[s].Token {
			continue
		}
		sort.Slice(starts, func(i, j int) bool { return starts[i].at.Before(starts[j].at) })
		var b strings.Builder
		fmt.Fprintf(&b, "slot %d (current token %d):", s, current[s].Token)
		for _, st := range starts {
			fmt.Fprintf(&b, " token %d (%s) started on %s at %s;", st.token, status[st.token], st.exec, st.at.Format("15:04:05.000"))
		}
		twice = append(twice, b.String())
	}
	sort.Strings(twice)
	require.Empty(t, twice, "%d slots started more than once, or not under their current token:\n%s", len(twice), strings.Join(twice, "\n"))
	want := len(current)
	if only != nil {
		want = len(only)
	}
	require.Len(t, bySlot, want, "every slot started")
}

// perExecutor counts the current attempts of each executor.
func perExecutor(current map[int]attemptView) map[int64]int {
	m := map[int64]int{}
	for _, a := range current {
		m[a.executor()]++
	}
	return m
}

func (a attemptView) String() string {
	return fmt.Sprintf("token %d (slot %d, attempt %d, executor %d): %s, current=%v, processed %d",
		a.Token, a.Slot, a.Attempt, a.executor(), a.Status, a.Current, a.Processed)
}
