package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Environment variables selecting the form (see the package documentation).
const (
	envForm   = "SHARDJOB_CHAOS"
	envJobs   = "SHARDJOB_CHAOS_JOBS"
	envRounds = "SHARDJOB_CHAOS_ROUNDS"
	envSettle = "SHARDJOB_CHAOS_SETTLE"
)

// config is one form of the test.
type config struct {
	form   string        // "short" or "long"
	jobs   int           // jobs firing every second
	rounds int           // times each disruption is applied
	settle time.Duration // undisturbed firing between disruptions
	// stopFor is how long the leader stays SIGSTOPped at least: longer
	// than its ZooKeeper session, so that it expires.
	stopFor time.Duration
	// stoppedMax bounds the wait for a successor while the leader is
	// stopped: the session expires after 6s, a successor should fire
	// within a second or two after that.
	stoppedMax time.Duration
}

func loadConfig(t *testing.T) config {
	t.Helper()
	cfg := config{form: "short", jobs: 60, rounds: 1, settle: 2 * time.Second, stopFor: 10 * time.Second, stoppedMax: 20 * time.Second}
	switch v := os.Getenv(envForm); v {
	case "", "short":
	case "long":
		cfg.form, cfg.jobs, cfg.rounds, cfg.settle = "long", 1000, 2, 10*time.Second
	default:
		t.Fatalf("%s=%q: use short or long", envForm, v)
	}
	for _, o := range []struct {
		env string
		dst *int
	}{{envJobs, &cfg.jobs}, {envRounds, &cfg.rounds}} {
		if v := os.Getenv(o.env); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q: want a positive integer", o.env, v)
			}
			*o.dst = n
		}
	}
	if v := os.Getenv(envSettle); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			t.Fatalf("%s=%q: want a duration such as 5s", envSettle, v)
		}
		cfg.settle = d
	}
	return cfg
}

// Kinds of disruption with a failover to measure.
const (
	kindKill     = "kill"
	kindStop     = "sigstop"
	kindStopInTx = "sigstop-in-tx"
)

// phase is the record of one disruption.
type phase struct {
	name      string
	kind      string
	at        time.Time // the disruption instant
	oldEpoch  int64
	oldHolder string
	// owned are the scheduling partitions the disrupted leader owned at
	// the disruption, with their epochs: the failover is the first run a
	// successor fires in one of them (successor).
	owned     map[int]int64
	newEpoch  int64 // epoch of the first run created under a larger epoch; 0 if leadership did not change
	newHolder string
	failover  time.Duration // at → first run created under a larger epoch
	maxPause  time.Duration // longest stretch without a new run, from at to the end of the phase
	maxDelay  time.Duration // largest created_at - scheduled_at of the runs created in the phase: how late a firing came
	notes     []string
	events    []string // interesting admin log messages during the phase
}

func (p *phase) String() string {
	s := fmt.Sprintf("%-22s leader %s (epoch %d)", p.name, p.oldHolder, p.oldEpoch)
	if len(p.owned) > 0 {
		s = fmt.Sprintf("%-22s %s (leader epoch %d, owner of %d partitions)", p.name, p.oldHolder, p.oldEpoch, len(p.owned))
	}
	if p.newEpoch != 0 {
		s += fmt.Sprintf(" -> %s (epoch %d), failover %s", p.newHolder, p.newEpoch, p.failover.Round(time.Millisecond))
	} else {
		s += ", no leader change"
	}
	s += fmt.Sprintf(", longest pause in run creation %s, latest firing %s late",
		p.maxPause.Round(time.Millisecond), p.maxDelay.Round(time.Millisecond))
	if len(p.notes) > 0 {
		s += "; " + strings.Join(p.notes, "; ")
	}
	return s
}

// TestChaosHAScheduling breaks the HA scheduling core with real processes
// and proves by SQL that no firing was lost, doubled or written by a stale
// leader. See the package documentation.
func TestChaosHAScheduling(t *testing.T) {
	haScheduling(t, startMariaDBPlatform, false)
}

// TestChaosHASchedulingPostgres is TestChaosHAScheduling with the platform
// database on PostgreSQL: kill -9 and SIGSTOP of the leader (also inside a
// transaction, whose locks PostgreSQL's idle_in_transaction_session_timeout
// must free) and a database outage (killed in odd rounds, stopped in even
// ones). ZooKeeper's outages are the MariaDB test's: they do not depend on
// the database.
func TestChaosHASchedulingPostgres(t *testing.T) {
	haScheduling(t, startPostgreSQLPlatform, true)
}

// haScheduling runs the HA scheduling chaos on the platform start gives;
// onPostgres leaves ZooKeeper's outages out and kills the database in odd
// rounds.
func haScheduling(t *testing.T, start func(testing.TB) platform, onPostgres bool) {
	cfg := loadConfig(t)
	began := time.Now()
	t.Logf("chaos: %s form: %d jobs, %d round(s), settle %s, SIGSTOP %s", cfg.form, cfg.jobs, cfg.rounds, cfg.settle, cfg.stopFor)

	c := newClusterOn(t, start)
	c.startAdmins()
	c.monitor()
	first := c.createJobs(cfg.jobs)
	epoch, leader := c.waitActiveLeader()
	t.Logf("chaos: %s leads with epoch %d; %d jobs fire every second from %s", leader.id, epoch, cfg.jobs, time.UnixMilli(first).UTC().Format(time.TimeOnly))
	pause(cfg.settle)

	var phases []*phase
	record := func(p *phase) {
		phases = append(phases, p)
		t.Logf("chaos: %s", p)
		for _, e := range p.events {
			t.Logf("chaos:     %s", e)
		}
		c.requireAlive("after " + p.name)
		pause(cfg.settle)
	}
	for r := 1; r <= cfg.rounds; r++ {
		record(c.killLeader(r))
		record(c.stopLeader(r, cfg, false))
		record(c.stopLeader(r, cfg, true))
		// Odd rounds stop the servers cleanly, even rounds kill them.
		// ZooKeeper stays down longer than the leader's trust window (2/3
		// of the session: 4s), in even rounds longer than the session.
		// MariaDB stays down long enough for firings to become late.
		hard := r%2 == 0
		if onPostgres {
			record(c.restartDatabase(r, !hard, 10*time.Second))
			continue
		}
		zkDown := 5 * time.Second
		if hard {
			zkDown = 8 * time.Second
		}
		record(c.restartZooKeeper(r, hard, zkDown))
		record(c.restartDatabase(r, hard, 10*time.Second))
	}

	c.waitCaughtUp(60 * time.Second)
	stoppedAt := time.Now()
	c.stopAdmins()
	c.stopMon()
	res := c.check(first, stoppedAt, cfg.jobs)

	// The summary.
	for _, p := range phases {
		t.Logf("chaos: %s", p)
	}
	failovers := map[string][]string{} // by kind of disruption
	for _, p := range phases {
		failovers[p.kind] = append(failovers[p.kind], p.failover.Round(time.Millisecond).String())
	}
	t.Logf("chaos summary: database=%s form=%s jobs=%d rounds=%d runs=%d (cron %d, catch_up %d, skipped %d) duplicate_keys=%d gap_jobs=%d "+
		"epochless=%d stale_writes=%d partition_runs=%d partition_stale_writes=%d epochs=%v max_firing_delay=%s failover_kill9=%v failover_sigstop=%v "+
		"failover_sigstop_in_tx=%v wall=%s",
		c.db.name(), cfg.form, cfg.jobs, cfg.rounds, res.runs, res.byTrigger["cron"], res.byTrigger["catch_up"], res.skipped,
		res.duplicateKeys, res.gapJobs, res.epochless, res.staleWrites, res.partitionRuns, res.partitionStale, res.epochs, res.maxDelay.Round(time.Millisecond),
		failovers[kindKill], failovers[kindStop], failovers[kindStopInTx], time.Since(began).Round(time.Second))
}

// killLeader: kill -9 the leader, measure the failover, start the replica
// again.
func (c *cluster) killLeader(round int) *phase {
	c.t.Helper()
	epoch, a := c.waitActiveLeader()
	return c.killReplica(fmt.Sprintf("kill -9 leader #%d", round), a, epoch)
}

// killReplica: kill -9 replica a (the leader of epoch, or another), measure
// the failover of its partitions, start it again.
func (c *cluster) killReplica(name string, a *admin, epoch int64) *phase {
	c.t.Helper()
	p := &phase{name: name, kind: kindKill, oldEpoch: epoch}
	p.oldHolder = a.id
	p.owned = c.ownedBy(a.id)
	afterID, m := c.maxRunID(), c.mark()
	p.at = time.Now()
	require.NoError(c.t, a.Kill())
	a.dead = true

	// A successor takes over once the dead leader's session expired.
	err := poll(60*time.Second, func() (bool, error) { return c.successor(p, afterID) })
	if err != nil {
		c.t.Fatalf("DEFECT: no replica created a run with an epoch above %d within 60s of kill -9 of %s: %v\n%s",
			p.oldEpoch, a.id, err, c.lockDiagnostics())
	}
	c.startAdmin(a.id)
	c.waitMembers()
	p.maxPause, p.maxDelay = c.maxPause(afterID, p.at)
	p.events = c.eventsSince(m)
	return p
}

// successor fills the new-owner fields of p from the first run created
// after afterID by a successor: with partitions, the first run fired in
// one of the disrupted admin's partitions under another epoch (the other
// partitions' firing never stopped); else the first run with an epoch
// above p.oldEpoch.
func (c *cluster) successor(p *phase, afterID int64) (bool, error) {
	var created, epoch int64
	var ok bool
	var err error
	if len(p.owned) > 0 {
		created, epoch, ok, err = c.firstRunTakenOver(afterID, p.owned)
	} else {
		created, epoch, ok, err = c.firstRunAbove(afterID, p.oldEpoch)
	}
	if !ok {
		return false, err
	}
	p.newEpoch, p.failover = epoch, time.Duration(created-p.at.UnixMilli())*time.Millisecond
	if epoch >= partitionEpochs {
		if err := c.sql.QueryRow("SELECT holder FROM scheduler_partition WHERE epoch = ? LIMIT 1", epoch).Scan(&p.newHolder); err != nil {
			p.newHolder = "?"
		}
		return true, nil
	}
	if o, seen := c.leader.Epoch(epoch); seen {
		p.newHolder = o.Holder
	} else if err := c.sql.QueryRow("SELECT holder FROM leader WHERE id = 1 AND epoch = ?", epoch).Scan(&p.newHolder); err != nil {
		p.newHolder = "?"
	}
	return true, nil
}

// stopLeader: SIGSTOP the leader past its session, wait for a successor to
// fire, SIGCONT it, and check that it wrote nothing after the successor's
// claim. With inTx the signal is sent while the leader is inside a fenced
// transaction, holding the shared lock on the leader row that the
// successor's claim must wait for.
func (c *cluster) stopLeader(round int, cfg config, inTx bool) *phase {
	c.t.Helper()
	p := &phase{name: fmt.Sprintf("SIGSTOP leader #%d", round), kind: kindStop}
	if inTx {
		p.name, p.kind = fmt.Sprintf("SIGSTOP leader in tx #%d", round), kindStopInTx
	}
	var a *admin
	p.oldEpoch, a = c.waitActiveLeader()
	p.oldHolder = a.id
	p.owned = c.ownedBy(a.id)
	afterID, m := c.maxRunID(), c.mark()
	if inTx {
		thread, tries := c.freezeInTx(a)
		p.notes = append(p.notes, fmt.Sprintf("frozen inside transaction of thread %d (attempt %d)", thread, tries))
	} else {
		require.NoError(c.t, a.Freeze())
	}
	p.at = time.Now()
	// Stay stopped for at least stopFor, longer than the ZooKeeper session:
	// the session expires while the process cannot notice.
	minStop := time.NewTimer(cfg.stopFor)

	if err := poll(cfg.stoppedMax, func() (bool, error) { return c.successor(p, afterID) }); err != nil {
		c.t.Errorf("DEFECT: no other replica created a run with an epoch above %d while %s was stopped for %s: %v\n"+
			"leader changes seen: %+v\n%s", p.oldEpoch, a.id, cfg.stoppedMax, err, c.leader.Observed(), c.lockDiagnostics())
	}
	<-minStop.C
	stopped := time.Since(p.at)
	require.NoError(c.t, a.Thaw())
	p.notes = append(p.notes, fmt.Sprintf("stopped %s", stopped.Round(100*time.Millisecond)))
	if p.newEpoch == 0 {
		// Failover came only after SIGCONT, if at all: measure it anyway.
		if err := poll(60*time.Second, func() (bool, error) { return c.successor(p, afterID) }); err != nil {
			c.t.Fatalf("DEFECT: no replica created a run with an epoch above %d within 60s of SIGCONT of %s: %v\n%s",
				p.oldEpoch, a.id, err, c.lockDiagnostics())
		}
	}

	// The woken leader must end its term: by the epoch fence if its
	// scheduler loop runs first, or by the ZooKeeper client's news (node
	// deleted, session expired) if that comes first.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	epoch := strconv.FormatInt(p.oldEpoch, 10)
	ended, err := a.WaitForRegexp(ctx, regexp.MustCompile(`msg="coord: term ended".* epoch=`+epoch+`( .*)?$`))
	if err != nil {
		c.t.Errorf("DEFECT: %s did not end its term (epoch %d) within 30s of SIGCONT: %v", a.id, p.oldEpoch, err)
	} else {
		p.notes = append(p.notes, "woken leader: "+eventText(ended[0]))
	}
	fence := grep(a.Output(), regexp.MustCompile(`epoch fence refused a write.* epoch=`+epoch+`( |$)`))
	p.notes = append(p.notes, fmt.Sprintf("epoch-fence refusals of epoch %d: %d", p.oldEpoch, len(fence)))

	if p.newEpoch != 0 {
		// The fence per partition: nothing fired under the stopped admin's
		// epoch of a partition after a successor's claim of it was seen
		// committed (check does this for every hand-over).
		n, last, moved := c.staleInPartitions(p, afterID)
		if n > 0 {
			c.t.Errorf("DEFECT: stale owner %s created %d runs in its former partitions after their successors' claims; last at %s",
				a.id, n, hms(last))
		}
		p.notes = append(p.notes, fmt.Sprintf("%d of its %d partitions moved; stale runs after their claims: %d", moved, len(p.owned), n))
		// The fence: nothing of the old epoch after the successor's claim
		// was seen committed (check does this for every leader change).
		if o, ok := c.leader.Epoch(p.newEpoch); ok {
			var n int
			var last int64
			require.NoError(c.t, c.sql.QueryRow(`SELECT COUNT(*), COALESCE(MAX(created_at), 0) FROM job_run
				WHERE id > ? AND epoch = ? AND created_at > ?`, afterID, p.oldEpoch, o.SeenAt.UnixMilli()).Scan(&n, &last))
			if n > 0 {
				c.t.Errorf("DEFECT: stale leader %s (epoch %d) created %d runs after %s claimed epoch %d (seen at %s); last at %s",
					a.id, p.oldEpoch, n, o.Holder, o.Epoch, o.SeenAt.Format("15:04:05.000"), hms(last))
			}
			p.notes = append(p.notes, fmt.Sprintf("successor's claim seen %s after SIGSTOP; stale runs after it: %d",
				o.SeenAt.Sub(p.at).Round(time.Millisecond), n))
		}
	}
	c.waitMembers()
	p.maxPause, p.maxDelay = c.maxPause(afterID, p.at)
	p.events = c.eventsSince(m)
	return p
}

// freezeInTx stops replica a (the leader) inside a fenced transaction.
// The test inserts, in a transaction of its own, the run the leader is
// about to create (the next firing of one job of a partition it owns).
// The leader's transaction checks its partitions' epochs first, taking
// the shared locks on their rows, then its multi-row INSERT IGNORE waits
// for the test's row lock. Once the wait shows in the process list, the
// leader gets SIGSTOP and the test rolls back: the leader's insert
// completes on the server, and its transaction stays open, the partitions'
// rows locked, for as long as the process is stopped.
// It returns the session id (MariaDB thread, PostgreSQL backend pid) of the frozen transaction and the number
// of attempts.
func (c *cluster) freezeInTx(a *admin) (int64, int) {
	c.t.Helper()
	ctx := context.Background()
	conn, err := c.sql.Conn(ctx)
	require.NoError(c.t, err)
	defer conn.Close()
	// Give up quickly when the leader holds the row already (it fired the
	// second meanwhile) and try the next one.
	set, reset := c.db.lockTimeout()
	_, err = conn.ExecContext(ctx, set)
	require.NoError(c.t, err)
	defer func() { _, _ = conn.ExecContext(ctx, reset) }()
	for attempt := 1; attempt <= 10; attempt++ {
		var jobID, next int64
		err := conn.QueryRowContext(ctx, `SELECT j.id, j.next_fire_at FROM job j JOIN scheduler_partition sp ON sp.id = j.partition_id
			WHERE j.app = ? AND sp.holder = ? ORDER BY j.next_fire_at, j.id LIMIT 1`, jobApp, a.id).Scan(&jobID, &next)
		require.NoError(c.t, err)
		tx, err := conn.BeginTx(ctx, nil)
		require.NoError(c.t, err)
		_, err = tx.ExecContext(ctx, `INSERT INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch, created_at)
			VALUES (?, ?, 'cron', 'pending', '', 1, 0, 0)`, jobID, next)
		if err != nil {
			_ = tx.Rollback()
			if c.db.duplicateOrTimeout(err) {
				continue // the leader created that run meanwhile, or is creating it
			}
			c.t.Fatalf("insert a run to hold its row lock: %v", err)
		}
		var thread int64
		err = poll(10*time.Second, func() (bool, error) {
			err := c.sql.QueryRow(c.db.waiterSQL(), a.id).Scan(&thread)
			if errors.Is(err, sql.ErrNoRows) {
				return false, nil
			}
			return err == nil, err
		})
		if err != nil {
			_ = tx.Rollback()
			c.t.Logf("chaos: %s did not wait for the run of job %d at %s: %v; trying again", a.id, jobID, hms(next), err)
			continue
		}
		require.NoError(c.t, a.Freeze())
		require.NoError(c.t, tx.Rollback())
		return thread, attempt
	}
	c.t.Fatalf("could not catch %s inside a transaction in 10 attempts", a.id)
	return 0, 0
}

// restartZooKeeper stops (or kills) ZooKeeper, keeps it down for down and
// starts it again.
func (c *cluster) restartZooKeeper(round int, hard bool, down time.Duration) *phase {
	c.t.Helper()
	p := &phase{name: fmt.Sprintf("ZooKeeper %s #%d", verb(hard), round), kind: "zookeeper"}
	var a *admin
	p.oldEpoch, a = c.waitActiveLeader()
	p.oldHolder = a.id
	p.owned = c.ownedBy(a.id)
	afterID, m := c.maxRunID(), c.mark()
	p.at = time.Now()
	if hard {
		require.NoError(c.t, c.zk.Kill())
	} else {
		require.NoError(c.t, c.zk.Stop())
	}
	// The outage itself is the point: keep the server down.
	pause(time.Until(p.at.Add(down)))
	require.NoError(c.t, c.zk.Start())
	up := time.Now()
	p.notes = append(p.notes, fmt.Sprintf("ZooKeeper down %s", up.Sub(p.at).Round(100*time.Millisecond)))

	c.waitRunAfter(afterID, up, 60*time.Second, "DEFECT: no run was created after ZooKeeper came back")
	c.waitMembers()
	c.waitCaughtUp(60 * time.Second)
	c.afterOutage(p, afterID)
	p.events = c.eventsSince(m)
	return p
}

// restartDatabase stops (or kills) the database, keeps it down for down and
// starts it again; every replica must survive and reconnect.
func (c *cluster) restartDatabase(round int, hard bool, down time.Duration) *phase {
	c.t.Helper()
	p := &phase{name: fmt.Sprintf("%s %s #%d", c.db.name(), verb(hard), round), kind: "database"}
	var a *admin
	p.oldEpoch, a = c.waitActiveLeader()
	p.oldHolder = a.id
	p.owned = c.ownedBy(a.id)
	afterID, m := c.maxRunID(), c.mark()
	p.at = time.Now()
	if hard {
		require.NoError(c.t, c.db.server().Kill())
	} else {
		require.NoError(c.t, c.db.server().Stop())
	}
	// The outage itself is the point: keep the server down.
	pause(time.Until(p.at.Add(down)))
	require.NoError(c.t, c.db.server().Start())
	up := time.Now()
	p.notes = append(p.notes, fmt.Sprintf("%s down %s", c.db.name(), up.Sub(p.at).Round(100*time.Millisecond)))

	c.requireAlive("while the database was down")
	c.waitReady(60 * time.Second)
	c.waitRunAfter(afterID, up, 60*time.Second, "DEFECT: no run was created after "+c.db.name()+" came back")
	c.waitCaughtUp(60 * time.Second)
	c.afterOutage(p, afterID)
	p.events = c.eventsSince(m)
	return p
}

func verb(hard bool) string {
	if hard {
		return "kill"
	}
	return "stop"
}

// afterOutage records who leads after a server outage and how long firing
// paused.
func (c *cluster) afterOutage(p *phase, afterID int64) {
	c.t.Helper()
	epoch, _ := c.waitActiveLeader()
	if epoch != p.oldEpoch {
		if _, err := c.successor(p, afterID); err != nil {
			c.t.Fatalf("read the first run of epoch %d: %v", epoch, err)
		}
	}
	p.maxPause, p.maxDelay = c.maxPause(afterID, p.at)
}

// stopAdmins sends SIGTERM to every running replica; each must exit 0.
func (c *cluster) stopAdmins() {
	c.t.Helper()
	for _, a := range c.running() {
		if err := a.Stop(); err != nil {
			c.t.Errorf("DEFECT: %s did not stop within %s of SIGTERM: %v", a.id, testenv.DefaultStopTimeout, err)
		}
		if code := a.ExitCode(); code != 0 {
			c.t.Errorf("DEFECT: %s exited with code %d after SIGTERM; last output:\n%s", a.id, code, tail(a.Output(), 20))
		}
		a.dead = true
	}
}

// compactLog shortens a slog text line to its message and attributes.
func compactLog(l string) string {
	if i := strings.Index(l, "msg="); i >= 0 {
		l = l[i:]
	}
	return oneLine(l)
}
