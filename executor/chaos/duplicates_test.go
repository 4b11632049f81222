package chaos

import (
	"database/sql"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

// Causes of a plain handler started more than once for a slot (issue 16).
// The first two are the promised at-least-once; the others must not happen.
const (
	causeKilled = "executor killed"            // kill -9, restarted under the same instance id
	causeFrozen = "executor frozen"            // SIGSTOP past the loss threshold: declared lost, legitimately re-run
	causeAdmin  = "admin frozen (cause 6)"     // a healthy executor declared lost because its admin froze
	causeStale  = "stale after wake (cause 5)" // the woken executor started a token already superseded
	causeOther  = "other"                      // anything else: a token started twice, a started slot moved, …
)

var causes = []string{causeKilled, causeFrozen, causeAdmin, causeStale, causeOther}

// dupForm is the size of TestChaosDuplicateCauses: rounds of the three
// faults, each round on a run of its own (256 slots of demo.range, each
// about records/slots*ms milliseconds long).
type dupForm struct {
	name    string
	rounds  int
	records int64
	ms      int
}

func chosenDupForm() dupForm {
	if os.Getenv("SHARDJOB_CHAOS") == "long" {
		return dupForm{name: "long", rounds: 3, records: slots * 40, ms: 50}
	}
	return dupForm{name: "short", rounds: 1, records: slots * 24, ms: 50}
}

// adminFreeze is how long the admin the executors use stays SIGSTOPped:
// twice the loss threshold, well within the ZooKeeper session (6 s), so a
// frozen leader keeps leading.
const adminFreeze = 2 * lostAfter

// TestChaosDuplicateCauses counts the plain-handler slots that started more
// than once while two admin replicas and three executors are broken, and
// attributes each duplicate to its cause (package documentation, scenario
// "Duplicate causes").
func TestChaosDuplicateCauses(t *testing.T) {
	f := chosenDupForm()
	start := time.Now()
	c := newCluster(t, startMariaDB)
	platform := c.db.platformPool(t)
	t.Cleanup(func() { _ = platform.Close() })
	replica := c.StartAdmin("replica")
	replicaURL := replica.URL
	d := &dupChaos{cluster: c, platform: platform, admins: map[string]*harness.Admin{c.API.Base: c.Admin, replicaURL: replica}}
	// The executors ask the replica first: it is the admin they use, and
	// the leader (which declares executors lost) is the other one.
	c.Exec.Admins = replicaURL + "," + c.API.Base
	c.WaitOnline(c.startExecutor(), c.startExecutor(), c.startExecutor())
	params := fmt.Sprintf("records=%d;ms_per_record=%d", f.records, f.ms)
	job := c.createJob("plain", "demo.range", params)
	t.Logf("form %s: %d rounds; job %d: demo.range over %d slots (%s, about %s a slot); 2 admins, 3 executors of capacity %d",
		f.name, f.rounds, job, slots, params, time.Duration(f.records/slots*int64(f.ms))*time.Millisecond, capacity)

	total := map[string]int{}
	var details, timings []string
	stuck := 0
	for round := 1; round <= f.rounds && stuck == 0; round++ {
		r := d.round(round, job)
		for k, n := range r.dups {
			total[k] += n
		}
		details = append(details, r.details...)
		timings = append(timings, r.timings)
		stuck += r.stuck
	}
	var byCause []string
	for _, k := range causes {
		byCause = append(byCause, fmt.Sprintf("%s=%d", k, total[k]))
	}
	t.Logf("rounds:\n  %s", strings.Join(timings, "\n  "))
	fmt.Printf("SUMMARY duplicate-causes (%s form, %d rounds of 256 slots): duplicate handler executions by cause: %s; stuck runs %d; total %s\n",
		f.name, f.rounds, strings.Join(byCause, " "), stuck, time.Since(start).Round(time.Millisecond))
	sort.Strings(details)
	require.Zero(t, stuck, "DEFECT: stuck runs: %s", strings.Join(details, "\n"))
	require.Zero(t, total[causeAdmin]+total[causeStale]+total[causeOther],
		"DEFECT: plain handlers started twice for causes other than a killed or frozen executor:\n%s", strings.Join(details, "\n"))
}

// dupChaos is the cluster of TestChaosDuplicateCauses.
type dupChaos struct {
	*cluster
	platform *sql.DB                   // the platform database, for the attempts' rows
	admins   map[string]*harness.Admin // by base URL
}

// dupRound is what one round measured.
type dupRound struct {
	dups    map[string]int // duplicate starts by cause
	details []string       // one line per duplicate not promised by at-least-once
	timings string
	stuck   int
}

// window is a fault's time span on the machine's clock.
type window struct{ from, to time.Time }

func (w window) covers(at time.Time) bool { return !at.Before(w.from) && !at.After(w.to) }

// round runs the job once and breaks the cluster while it runs: (a) kill -9
// of an executor and its restart under the same instance id, (b) SIGSTOP of
// the admin the executors use for adminFreeze, (c) SIGSTOP of an executor
// until it was declared lost and its slots moved. Then it audits the run.
func (d *dupChaos) round(round int, job int64) dupRound {
	t := d.t
	run, created := d.trigger(job, nil)
	require.True(t, created)
	runStart := time.Now()
	since := func(at time.Time) string { return at.Sub(runStart).Round(time.Millisecond).String() }
	d.waitAllRunning(run.ID)

	// (a) kill -9 and restart under the same instance id.
	var victim *harness.Executor // ex1, ex2, ex3, ex1, … (restarted under the same name)
	for _, e := range d.alive() {
		if e.Name == fmt.Sprintf("ex%d", (round-1)%3+1) {
			victim = e
		}
	}
	require.NoError(t, victim.Kill())
	killedAt := time.Now()
	held := runningNow(victim, run.ID)
	require.NotEmpty(t, held, "%s was running no slot when it was killed", victim.Name)
	again := d.restartExecutor(victim)
	listening := time.Since(killedAt)
	d.WaitAttempts(run.ID, "the killed process's slots were not superseded after its restart", func(atts []apitypes.Attempt) error {
		status := map[int64]apitypes.Attempt{}
		for _, a := range atts {
			status[a.Token] = a
		}
		for _, h := range held {
			if a := status[h.Token]; a.Current {
				return fmt.Errorf("token %d (slot %d) is still current: %s", h.Token, h.Slot, harness.AttemptString(a))
			}
		}
		return nil
	})
	superseded := time.Since(killedAt)
	d.WaitOnline(again)
	t.Logf("round %d (a): kill -9 %s at +%s running %d slots; the new process under the same instance id listened after %s; the %d tokens superseded after %s",
		round, victim.Name, since(killedAt), len(held), listening.Round(time.Millisecond), len(held), superseded.Round(time.Millisecond))

	// (b) SIGSTOP the admin the executors use.
	d.requireRunning(run.ID, "the admin freeze")
	attached := d.attachedAdmin()
	admin := d.admins[attached]
	role := "replica"
	if admin == d.Admin {
		role = "leader"
	}
	adminWin := window{from: time.Now()}
	require.NoError(t, admin.Freeze()) // thawed before the cleanup stops it
	lostSeen := d.watchExecutors(adminWin.from.Add(adminFreeze))
	adminWin.to = time.Now()
	require.NoError(t, admin.Thaw())
	switched := 0
	for _, e := range d.alive() {
		for _, l := range logLines(e.Process, "switched admin") {
			if l.Time().After(adminWin.from) && l["from"] == attached {
				switched++
				break
			}
		}
	}
	t.Logf("round %d (b): SIGSTOP of the %s at +%s (the admin %d executors used) for %s; %d executors switched admin; executors seen not online meanwhile: %v",
		round, role, since(adminWin.from), len(d.alive()), adminWin.to.Sub(adminWin.from).Round(time.Millisecond), switched, lostSeen)

	// (c) SIGSTOP an executor (not the restarted one) until it was declared
	// lost and its slots moved, then SIGCONT.
	d.requireRunning(run.ID, "the executor freeze")
	_, atts, err := d.Run(run.ID)
	require.NoError(t, err)
	var frozen *harness.Executor
	for _, e := range d.alive() {
		if e != again && (frozen == nil || len(on(atts, e, "assigned", "queued")) > len(on(atts, frozen, "assigned", "queued"))) {
			frozen = e
		}
	}
	require.NoError(t, frozen.Freeze())
	frozenWin := window{from: time.Now()}
	queued := len(on(atts, frozen, "assigned", "queued"))
	d.WaitAttempts(run.ID, "the frozen executor's slots were not moved", func(atts []apitypes.Attempt) error {
		if n := len(on(atts, frozen, "assigned", "queued", "running")); n > 0 {
			return fmt.Errorf("%d unfinished current attempts still on %s", n, frozen.Name)
		}
		return nil
	})
	moved := time.Since(frozenWin.from)
	frozenWin.to = time.Now()
	require.NoError(t, frozen.Thaw())
	// Its last heartbeat may have come up to one interval before the
	// freeze, so that the loss can be declared lostAfter - heartbeat after it.
	require.Greater(t, moved, lostAfter-heartbeat, "frozen until the loss threshold had passed since its last heartbeat")
	t.Logf("round %d (c): SIGSTOP %s at +%s with %d slots assigned and not started; its slots moved and SIGCONT after %s (loss threshold %s)",
		round, frozen.Name, since(frozenWin.from), queued, moved.Round(time.Millisecond), lostAfter)

	// The run ends, and nothing is left running anywhere.
	r, ended := d.waitEnded(run.ID)
	if !ended {
		return dupRound{stuck: 1, details: []string{fmt.Sprintf("run %d did not end within %s: %s", run.ID, waitDeadline, r.Error)}}
	}
	took := time.Since(runStart)
	for _, e := range d.alive() {
		testenv.WaitFor(t, waitDeadline, func() (bool, error) {
			if n := runningNow(e, run.ID); len(n) > 0 {
				return false, fmt.Errorf("%s still runs tokens %v", e.Name, tokens(n))
			}
			return true, nil
		}, fmt.Sprintf("DEFECT: run %d ended but %s still runs handlers of it", run.ID, e.Name))
	}
	var unfinished int64
	require.NoError(t, d.platform.QueryRow(
		"SELECT COUNT(*) FROM slot_attempt WHERE run_id = ? AND current = 1 AND status IN ('assigned', 'running')", run.ID).Scan(&unfinished))
	require.Zero(t, unfinished, "DEFECT: run %d ended (%s) with current attempts still assigned or running", run.ID, r.Status)
	stolen := d.reportSteals("plain", run.ID)

	out := d.attribute(run.ID, faults{killed: victim, frozen: frozen, frozenWin: frozenWin, adminWin: adminWin})
	var byCause []string
	for _, k := range causes {
		byCause = append(byCause, fmt.Sprintf("%s=%d", k, out.dups[k]))
	}
	out.timings = fmt.Sprintf("round %d: run %d %s in %s; kill -9 %s → restart listening %s, tokens superseded %s; SIGSTOP %s %s; SIGSTOP %s %s (moved); duplicates %s; stealing: %s",
		round, run.ID, r.Status, took.Round(time.Millisecond), victim.Name, listening.Round(time.Millisecond), superseded.Round(time.Millisecond),
		role, adminWin.to.Sub(adminWin.from).Round(time.Millisecond), frozen.Name, moved.Round(time.Millisecond), strings.Join(byCause, " "), stolen)
	t.Log(out.timings)
	return out
}

// waitAllRunning waits until every live executor runs slots of the run.
func (d *dupChaos) waitAllRunning(runID int64) {
	d.t.Helper()
	testenv.WaitFor(d.t, waitDeadline, func() (bool, error) {
		for _, e := range d.alive() {
			if len(runningNow(e, runID)) == 0 {
				return false, fmt.Errorf("%s runs no slot of run %d", e.Name, runID)
			}
		}
		return true, nil
	}, "the executors did not all start slots")
}

func (d *dupChaos) requireRunning(runID int64, what string) {
	d.t.Helper()
	r, _, err := d.Run(runID)
	require.NoError(d.t, err)
	require.False(d.t, harness.Terminal[r.Status], "run %d ended (%s) before %s: make it longer (records, ms_per_record)", runID, r.Status, what)
}

// attachedAdmin returns the admin most live executors send their heartbeats
// to: the last one they switched to, else the first of their --admins.
func (d *dupChaos) attachedAdmin() string {
	first, _, _ := strings.Cut(d.Exec.Admins, ",")
	votes := map[string]int{}
	best := first
	for _, e := range d.alive() {
		a := first
		if ls := logLines(e.Process, "switched admin"); len(ls) > 0 {
			a = ls[len(ls)-1]["to"]
		}
		votes[a]++
		if votes[a] > votes[best] {
			best = a
		}
	}
	return best
}

// watchExecutors polls the platform database until the given instant (the
// end of a fault of fixed length) and returns the executors it saw in
// another state than online, with the first such state and when.
func (d *dupChaos) watchExecutors(until time.Time) []string {
	var seen []string
	noted := map[string]bool{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(until) {
		rows, err := d.platform.Query("SELECT instance_id, state FROM executor WHERE app = ?", app)
		require.NoError(d.t, err)
		for rows.Next() {
			var name, state string
			require.NoError(d.t, rows.Scan(&name, &state))
			if state != "online" && !noted[name] && d.isAlive(name) {
				noted[name] = true
				seen = append(seen, fmt.Sprintf("%s %s at %s", name, state, time.Now().Format("15:04:05.000")))
			}
		}
		require.NoError(d.t, rows.Err())
		rows.Close()
		<-tick.C
	}
	return seen
}

func (d *dupChaos) isAlive(name string) bool {
	for _, e := range d.alive() {
		if e.Name == name {
			return true
		}
	}
	return false
}

// waitEnded waits until the run is terminal: succeeded, or failed with a
// reason. It returns false for a run still active at the deadline: a stuck
// run, which the caller reports (DEFECT) after the summary.
func (d *dupChaos) waitEnded(runID int64) (apitypes.Run, bool) {
	d.t.Helper()
	deadline := time.Now().Add(waitDeadline)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		r, atts, err := d.Run(runID)
		if err == nil && harness.Terminal[r.Status] {
			if r.Status != "succeeded" {
				require.NotEmpty(d.t, r.Error, "DEFECT: run %d ended %s without a reason", runID, r.Status)
				d.t.Logf("run %d ended %s: %s", runID, r.Status, r.Error)
			}
			return r, true
		}
		if time.Now().After(deadline) {
			byStatus := map[string]int{}
			for _, a := range harness.Current(atts) {
				byStatus[a.Status]++
			}
			r.Error = fmt.Sprintf("%s; current attempts by status %v; last error %v", r.Status, byStatus, err)
			return r, false
		}
		<-tick.C
	}
}

// faults is what attribute needs to know of a round's faults.
type faults struct {
	killed, frozen      *harness.Executor // the killed process, the frozen one
	frozenWin, adminWin window            // when the executor and the admin were stopped
}

// handlerStart is one "slot started" line.
type handlerStart struct {
	e     *harness.Executor
	token int64
	at    time.Time
}

// attribute counts, from the executors' "slot started" lines and the
// attempts' rows, every handler start beyond one per slot and gives each
// its cause. The start of the slot's current token is the one that counts;
// every other start is a duplicate, attributed by the process that made it
// and by when its token was superseded (slot_attempt.finished_at, set by
// the database when an attempt is superseded):
//   - by the killed process: executor killed;
//   - by the frozen process before SIGSTOP: executor frozen;
//   - by the frozen process after SIGCONT, of a token superseded before
//     that start: cause 5;
//   - by any other process, of a token superseded while the admin was
//     frozen or within the loss threshold after it: cause 6;
//   - anything else, a token started twice included: other.
func (d *dupChaos) attribute(runID int64, f faults) dupRound {
	t := d.t
	rows, err := d.platform.Query("SELECT id, slot, status, current, COALESCE(finished_at, 0) FROM slot_attempt WHERE run_id = ?", runID)
	require.NoError(t, err)
	type attempt struct {
		slot     int
		status   string
		current  bool
		finished time.Time
	}
	attempts := map[int64]attempt{}
	keeper := map[int]int64{} // slot → current token
	for rows.Next() {
		var tok, fin int64
		var a attempt
		require.NoError(t, rows.Scan(&tok, &a.slot, &a.status, &a.current, &fin))
		a.finished = time.UnixMilli(fin)
		attempts[tok] = a
		if a.current {
			keeper[a.slot] = tok
		}
	}
	require.NoError(t, rows.Err())
	rows.Close()

	bySlot := map[int][]handlerStart{}
	for _, e := range d.Execs() {
		for _, l := range parseLines(e.Output(), "run_id="+strconv.FormatInt(runID, 10)+" ", "slot started")["slot started"] {
			bySlot[int(l.Int("slot"))] = append(bySlot[int(l.Int("slot"))], handlerStart{e: e, token: l.Int("token"), at: l.Time()})
		}
	}
	out := dupRound{dups: map[string]int{}}
	require.Len(t, keeper, slots, "every slot has a current attempt")
	for slot, starts := range bySlot {
		sort.Slice(starts, func(i, j int) bool { return starts[i].at.Before(starts[j].at) })
		seen := map[int64]bool{}
		kept := false
		for _, s := range starts {
			a := attempts[s.token]
			if s.token == keeper[slot] && !seen[s.token] {
				kept = true
				seen[s.token] = true
				continue
			}
			cause := causeOther
			switch {
			case seen[s.token]:
			case s.e == f.killed:
				cause = causeKilled
			case s.e == f.frozen && s.at.Before(f.frozenWin.from) && !a.finished.Before(f.frozenWin.from):
				cause = causeFrozen
			case s.e == f.frozen && !s.at.Before(f.frozenWin.to) && !a.current && !a.finished.After(s.at):
				cause = causeStale
			case !a.current && (window{f.adminWin.from, f.adminWin.to.Add(lostAfter + heartbeat)}).covers(a.finished):
				cause = causeAdmin
			}
			seen[s.token] = true
			out.dups[cause]++
			if cause != causeKilled && cause != causeFrozen {
				out.details = append(out.details, fmt.Sprintf("run %d slot %d: token %d (%s, superseded %s) started on %s (pid %d) at %s: %s; current token %d",
					runID, slot, s.token, a.status, a.finished.Format("15:04:05.000"), s.e.Name, s.e.PID(), s.at.Format("15:04:05.000"), cause, keeper[slot]))
			}
		}
		require.True(t, kept || attempts[keeper[slot]].status != "succeeded", "DEFECT: run %d slot %d: its current token %d never started (starts %v)", runID, slot, keeper[slot], starts)
	}
	require.Len(t, bySlot, slots, "every slot started")
	return out
}
