package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
	"github.com/shardjob/shardjob/sdk"
	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	// heartbeat is the heartbeat interval of the admin and the executors;
	// the admin declares an executor lost after lostAfter of silence.
	heartbeat = time.Second
	lostAfter = 3 * heartbeat

	// Deadlines are generous: binaries built with -race, on a 2-core
	// machine shared with other tests.
	startDeadline = 90 * time.Second
	runDeadline   = 120 * time.Second
)

// envLogDir names a directory that receives the whole output of every
// process a test started, as <dir>/<test>/<name>.log (testenv reports only
// the last lines, and only when the test failed).
const envLogDir = "SHARDJOB_E2E_LOG_DIR"

// logDir is the directory of t's process outputs, "" when not kept.
func logDir(t *testing.T) string {
	dir := os.Getenv(envLogDir)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_"))
}

// cluster is one admin replica and the executors a test started.
type cluster struct {
	*harness.Cluster
	t *testing.T // the test its methods fail and clean up after
	n *int       // executors started, for instance ids
}

// in returns the cluster for the subtest t: its methods fail t, and the
// processes they start are stopped when t ends.
func (c *cluster) in(t *testing.T) *cluster {
	return &cluster{Cluster: c.Cluster.In(t), t: t, n: c.n}
}

// newCluster starts `shardjob-admin serve` on its own database and ZooKeeper
// chroot, waits until it leads, and logs in with the printed password.
func newCluster(t *testing.T) *cluster { t.Helper(); return newClusterWith(t) }

// newClusterWith is newCluster with more flags for every admin replica.
func newClusterWith(t *testing.T, adminArgs ...string) *cluster {
	t.Helper()
	hc := harness.New(t, "admin", harness.AdminOpts{
		ID: "exec-e2e-{port}",
		Args: append([]string{
			"--db-driver", "mysql", "--db-dsn", testenv.MySQL(t), "--zk", testenv.ZooKeeper(t), "--zk-root", testenv.ZKChroot(t),
			"--heartbeat-interval", heartbeat.String(),
		}, adminArgs...),
		Secret:       protocol.NewSecret(),
		StartTimeout: startDeadline,
		LogDir:       logDir(t),
	})
	hc.Exec = harness.ExecutorOpts{
		Heartbeat: heartbeat, DrainTimeout: 2 * time.Second,
		LogLevel: "debug", // the tests audit slot starts from the "slot started" lines
	}
	hc.WaitTimeout = runDeadline
	return &cluster{Cluster: hc, t: t, n: new(int)}
}

// startReplica starts one more `shardjob-admin serve` of the cluster (same
// database, ZooKeeper chroot and secret) and waits until it serves.
func (c *cluster) startReplica(name string) *harness.Admin {
	c.t.Helper()
	c.AdminOpts.LogDir = logDir(c.t)
	return c.StartAdmin(name)
}

// startExecutor starts an executor of app with the given capacity and the
// cluster's secret (or secret, when given) and waits until it listens. It
// does not wait until the admin knows it: see WaitOnline.
func (c *cluster) startExecutor(app string, capacity int, secret ...string) *harness.Executor {
	c.t.Helper()
	*c.n++
	o := harness.ExecutorOpts{App: app, Capacity: capacity, InstanceID: fmt.Sprintf("%s-ex%d", app, *c.n), LogDir: logDir(c.t)}
	if len(secret) > 0 {
		o.Secret = secret[0]
	}
	return c.StartExecutor(o)
}

// restartExecutor starts a new process under the instance id of e (whose
// process the test stopped) and waits until it listens.
func (c *cluster) restartExecutor(e *harness.Executor, capacity int) *harness.Executor {
	c.t.Helper()
	again := c.StartExecutor(harness.ExecutorOpts{App: e.App, Capacity: capacity, InstanceID: e.Name, LogDir: logDir(c.t)})
	again.ID = e.ID
	return again
}

// createJob creates a disabled job (it runs only when triggered) running
// demo.range over slots slots and returns its id.
func (c *cluster) createJob(app, name string, slots int, params string) int64 {
	c.t.Helper()
	enabled := false
	return c.CreateJob(apitypes.JobSpec{JobDef: apitypes.JobDef{
		App: app, Name: name, Handler: "demo.range", Cron: "0 0 1 1 *",
		SlotCount: slots, Params: params, Enabled: &enabled,
	}})
}

// trigger starts a run of the job by hand and returns it.
func (c *cluster) trigger(jobID int64) apitypes.Run {
	c.t.Helper()
	r, created := c.Trigger(jobID, nil)
	require.True(c.t, created)
	return r
}

// settleGrace is how long a run may stay active after every current
// attempt of its slots has ended. The admin settles a run in the
// transaction that records its last result, so this is only slack for
// the API poll.
const settleGrace = 15 * time.Second

// waitRunEnded waits until the run is terminal and returns it with its
// attempts. It fails early, naming the problem, when every slot has ended
// but the run stays active.
func (c *cluster) waitRunEnded(id int64) (apitypes.Run, []apitypes.Attempt) {
	c.t.Helper()
	var allEndedAt time.Time // when every current attempt was first seen ended
	return c.WaitRunEnded(id, func(r apitypes.Run, atts []apitypes.Attempt) error {
		status := map[string]int{}
		ended := len(atts) > 0
		for _, a := range atts {
			if a.Current {
				status[a.Status]++
				ended = ended && (a.Status == "succeeded" || a.Status == "failed" || a.Status == "cancelled")
			}
		}
		state := fmt.Errorf("run %d is %s (slots_succeeded=%d slots_failed=%d of %d); current attempts by status: %v",
			id, r.Status, r.SlotsSucceeded, r.SlotsFailed, r.SlotCount, status)
		switch {
		case !ended:
			allEndedAt = time.Time{}
		case allEndedAt.IsZero():
			allEndedAt = time.Now()
		case time.Since(allEndedAt) > settleGrace:
			c.t.Fatalf("run %d never settled: every slot ended %s ago but the run is still %s: %v",
				id, settleGrace, r.Status, state)
		}
		return state
	})
}

// checkRunSucceeded asserts the outcome every test wants: the run
// succeeded, every slot has exactly one current attempt and it succeeded,
// every other attempt of a slot was superseded, and the current attempts
// processed records records in all. It returns the current attempt of
// each slot.
func checkRunSucceeded(t *testing.T, r apitypes.Run, atts []apitypes.Attempt, slots int, records int64) map[int]apitypes.Attempt {
	t.Helper()
	require.Equal(t, "succeeded", r.Status, "run %d: %s", r.ID, r.Error)
	require.Equal(t, slots, r.SlotsSucceeded)
	current := map[int]apitypes.Attempt{}
	var processed int64
	for _, a := range atts {
		require.True(t, a.Slot >= 0 && a.Slot < slots, "attempt of slot %d outside the run's %d slots", a.Slot, slots)
		if !a.Current {
			require.Contains(t, []string{"lost", "moved"}, a.Status, "a superseded attempt: %s", harness.AttemptString(a))
			continue
		}
		prev, dup := current[a.Slot]
		require.False(t, dup, "slot %d has two current attempts: %s and %s", a.Slot, harness.AttemptString(prev), harness.AttemptString(a))
		require.Equal(t, "succeeded", a.Status, "current attempt of slot %d: %s", a.Slot, harness.AttemptString(a))
		current[a.Slot] = a
		processed += a.Processed
	}
	require.Len(t, current, slots, "every slot has a current attempt")
	require.Equal(t, records, processed, "processed records over the current attempts")
	return current
}

// logLines returns the lines of p's output whose message starts with msg.
func logLines(p *testenv.Process, msg string) []harness.LogLine {
	var out []harness.LogLine
	for _, l := range harness.LogLines(p.Output(), msg) {
		if strings.HasPrefix(l.Msg(), msg) {
			out = append(out, l)
		}
	}
	return out
}

// forRun keeps the lines tagged with the run.
func forRun(lines []harness.LogLine, runID int64) []harness.LogLine {
	var out []harness.LogLine
	id := strconv.FormatInt(runID, 10)
	for _, l := range lines {
		if l["run_id"] == id {
			out = append(out, l)
		}
	}
	return out
}

// started returns the "slot started" lines of a run in p's output, by token.
func started(p *testenv.Process, runID int64) map[int64]harness.LogLine {
	m := map[int64]harness.LogLine{}
	for _, l := range forRun(logLines(p, "slot started"), runID) {
		tok, _ := strconv.ParseInt(l["token"], 10, 64)
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
func ranges(t *testing.T, runID int64, execs ...*harness.Executor) []rangeLine {
	t.Helper()
	var out []rangeLine
	for _, e := range execs {
		for _, l := range forRun(logLines(e.Process, "range slot="), runID) {
			m := rangeRE.FindStringSubmatch(l.Msg())
			require.NotNil(t, m, "malformed range line %q", l.Msg())
			r := rangeLine{Executor: e.Name, Time: l.Time()}
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
func checkCoverage(t *testing.T, lines []rangeLine, current map[int]apitypes.Attempt, slots int, records int64) {
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
func startsOf(runID int64, ignore map[int64]bool, execs ...*harness.Executor) []slotStart {
	var out []slotStart
	for _, e := range execs {
		for tok, l := range started(e.Process, runID) {
			if ignore[tok] {
				continue
			}
			s, _ := strconv.Atoi(l["slot"])
			out = append(out, slotStart{s, tok, e.Name, l.Time()})
		}
	}
	return out
}

// checkStartedOnce asserts that no slot started twice: starts holds
// exactly one start per slot, for the slot's current token. only, when not
// nil, limits the check to some slots. The message of a failure lists every
// start of the slot with the status the admin gives that attempt.
func checkStartedOnce(t *testing.T, starts []slotStart, atts []apitypes.Attempt, current map[int]apitypes.Attempt, only map[int]bool) {
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
func perExecutor(current map[int]apitypes.Attempt) map[int64]int {
	m := map[int64]int{}
	for _, a := range current {
		m[harness.ExecutorOf(a)]++
	}
	return m
}
