package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
	"github.com/shardjob/shardjob/sdk/protocol"
)

const (
	// dbName is the platform database on the private server.
	dbName = "shardjob"
	// app of the jobs this test creates.
	jobApp = "chaos"
	// zkSession is the admins' ZooKeeper session timeout.
	zkSession = 6 * time.Second
	// adminCount replicas share the database and ZooKeeper.
	adminCount = 3
)

// admin is one replica. A replica that is killed and started again keeps
// its id and gets a new admin value; every process ever started stays in
// cluster.procs so that its output can be searched at the end.
type admin struct {
	*harness.Admin
	id   string
	dead bool // killed or stopped on purpose
}

// cluster is the system under test and the test's own view of it.
type cluster struct {
	t      testing.TB
	db     platform
	zk     *testenv.ZK
	root   string
	secret string
	sql    *sql.DB // the test's own pool on the platform database
	hc     *http.Client
	token  string // console session (sessions live in the database: valid on every replica)

	admins map[string]*admin
	procs  []*admin // every process ever started, in order

	leader *harness.LeaderWatch    // the leader row, once monitor started
	parts  *harness.PartitionWatch // the partitions' fencing records, once monitor started
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	return newClusterOn(t, startMariaDBPlatform)
}

// newClusterOn is newCluster with the platform database start gives.
func newClusterOn(t testing.TB, start func(testing.TB) platform) *cluster {
	t.Helper()
	began := time.Now()
	c := &cluster{
		t:      t,
		db:     start(t),
		zk:     testenv.StartZooKeeper(t),
		root:   testenv.ZKChroot(t),
		secret: protocol.NewSecret(),
		hc:     &http.Client{Timeout: 5 * time.Second},
		admins: map[string]*admin{},
	}
	testenv.BuildBinary(t, harness.AdminPkg) // before the clock of the first start
	t.Logf("chaos: binary, %s %s and ZooKeeper %s ready in %s", c.db.name(), c.db.server().Addr(), c.zk.Addr(), time.Since(began).Round(time.Millisecond))

	// One database user per replica, named like it, so that the test can
	// tell the replicas' connections and transactions apart.
	c.db.setup(t, adminCount)
	// The test's pool must fail fast while the database is down, not hang.
	c.sql = c.db.testPool(t)
	c.sql.SetMaxOpenConns(4)
	t.Cleanup(func() { _ = c.sql.Close() }) // before StartMariaDB's cleanup stops the server
	return c
}

// startAdmin starts replica id (again) and waits until it serves.
func (c *cluster) startAdmin(id string) *admin {
	c.t.Helper()
	a := &admin{id: id, Admin: harness.StartAdmin(c.t, harness.AdminOpts{
		ID: id,
		Args: []string{
			"--db-driver", c.db.driver(), "--db-dsn", c.db.adminDSN(c.t, id),
			"--zk", c.zk.Addr(), "--zk-root", c.root, "--zk-session-timeout", zkSession.String(),
		},
		Secret: c.secret,
	})}
	c.admins[id] = a
	c.procs = append(c.procs, a)
	return a
}

// startAdmins starts the replicas: the first alone (it migrates the schema
// and prints the console password), then the others.
func (c *cluster) startAdmins() {
	c.t.Helper()
	first := c.startAdmin("admin-1")
	password := first.Password(c.t)
	for i := 2; i <= adminCount; i++ {
		c.startAdmin("admin-" + strconv.Itoa(i))
	}
	api := &cli.Client{Base: first.URL, HTTP: c.hc}
	require.NoError(c.t, api.Login(context.Background(), "admin", password))
	c.token = api.Token
	c.waitMembers()
}

// running returns the replicas that should be alive and responsive.
func (c *cluster) running() []*admin {
	var out []*admin
	for i := 1; i <= adminCount; i++ {
		if a := c.admins["admin-"+strconv.Itoa(i)]; a != nil && !a.dead && !a.Frozen() {
			out = append(out, a)
		}
	}
	return out
}

// requireAlive stops the test if a replica that should run has exited.
func (c *cluster) requireAlive(when string) {
	c.t.Helper()
	for _, a := range c.admins {
		if a.dead {
			continue
		}
		select {
		case <-a.Done():
			c.t.Fatalf("DEFECT: %s (pid %d) exited by itself %s (exit code %d); last output:\n%s",
				a.id, a.PID(), when, a.ExitCode(), tail(a.Output(), 40))
		default:
		}
	}
}

// call sends a JSON request to replica a, in the console session.
func (c *cluster) call(a *admin, method, path string, in, out any) (int, error) {
	api := cli.Client{Base: a.URL, Token: c.token, HTTP: c.hc}
	return api.Call(context.Background(), method, path, in, out)
}

// waitMembers waits until ZooKeeper, as seen by every running replica,
// lists all replicas as members with exactly one leader.
func (c *cluster) waitMembers() {
	c.t.Helper()
	testenv.WaitFor(c.t, 60*time.Second, func() (bool, error) {
		for _, a := range c.running() {
			var out struct {
				Members []struct {
					ID     string `json:"id"`
					Leader bool   `json:"leader"`
				} `json:"members"`
				MembersError string `json:"members_error"`
			}
			code, err := c.call(a, http.MethodGet, "/api/v1/cluster", nil, &out)
			if err != nil {
				return false, err
			}
			if code != http.StatusOK || out.MembersError != "" {
				return false, fmt.Errorf("%s: /api/v1/cluster %d %s", a.id, code, out.MembersError)
			}
			leaders := 0
			for _, m := range out.Members {
				if m.Leader {
					leaders++
				}
			}
			if len(out.Members) != adminCount || leaders != 1 {
				return false, fmt.Errorf("%s sees %d members and %d leaders: %+v", a.id, len(out.Members), leaders, out.Members)
			}
		}
		return true, nil
	}, "ZooKeeper membership did not come back to every replica with one leader")
}

// waitReady waits until every running replica answers /readyz (it pings
// the database).
func (c *cluster) waitReady(timeout time.Duration) {
	c.t.Helper()
	testenv.WaitFor(c.t, timeout, func() (bool, error) {
		for _, a := range c.running() {
			code, err := c.call(a, http.MethodGet, "/readyz", nil, nil)
			if err != nil {
				return false, fmt.Errorf("%s: %w", a.id, err)
			}
			if code != http.StatusOK {
				return false, fmt.Errorf("%s: /readyz answered %d", a.id, code)
			}
		}
		return true, nil
	}, "DEFECT: a replica did not become ready again (cannot reach the database?)")
}

// monitor records every change of the leader row until stopMon.
func (c *cluster) monitor() {
	c.leader = harness.WatchLeader(c.t, c.sql)
	c.parts = harness.WatchPartitions(c.t, c.sql)
}

func (c *cluster) stopMon() {
	c.leader.Stop()
	c.parts.Stop()
}

// dbNowMS reads the database clock, the clock of created_at.
func (c *cluster) dbNowMS() (int64, error) {
	var now int64
	err := c.sql.QueryRow("SELECT " + c.db.nowMS()).Scan(&now)
	return now, err
}

// maxRunID returns the largest job_run id; runs created later have larger
// ids, which keeps the phase queries on the primary key.
func (c *cluster) maxRunID() int64 {
	c.t.Helper()
	var id sql.NullInt64
	testenv.WaitFor(c.t, 30*time.Second, func() (bool, error) {
		err := c.sql.QueryRow("SELECT MAX(id) FROM job_run").Scan(&id)
		return err == nil, err
	}, "read the largest run id")
	return id.Int64
}

// waitActiveLeader waits until the leader row names a running replica
// and runs are fired: with partitions, the newest run fired under the
// current epoch of its job's partition (by its current owner; the leader
// itself when it owns the partition of a job, since jobs may be few) is
// less than 2.5s old; without, the newest run was created under the
// leader's epoch less than 2.5s ago.
func (c *cluster) waitActiveLeader() (int64, *admin) {
	c.t.Helper()
	var epoch int64
	var holder string
	testenv.WaitFor(c.t, 60*time.Second, func() (bool, error) {
		var err error
		if epoch, holder, err = c.leaderRow(); err != nil {
			return false, err
		}
		var runEpoch, created, now, newest int64
		err = c.sql.QueryRow(`SELECT id, epoch, created_at, `+c.db.nowMS()+`
			FROM job_run ORDER BY id DESC LIMIT 1`).Scan(&newest, &runEpoch, &created, &now)
		if err != nil {
			return false, err
		}
		var owned int
		if err := c.sql.QueryRow("SELECT COUNT(*) FROM scheduler_partition WHERE holder = ?", holder).Scan(&owned); err != nil {
			return false, err
		}
		if owned == 0 {
			if runEpoch != epoch || now-created > 2500 {
				return false, fmt.Errorf("newest run: epoch %d, %dms old; leader row: epoch %d", runEpoch, now-created, epoch)
			}
			return true, nil
		}
		// The recent runs only (by id): the newest fired by its partition's
		// current owner, and the newest the leader fired.
		var fired, byLeader sql.NullInt64
		if err := c.sql.QueryRow(`SELECT MAX(r.created_at), MAX(CASE WHEN sp.holder = ? THEN r.created_at END)
			FROM job_run r JOIN job j ON j.id = r.job_id JOIN scheduler_partition sp ON sp.id = j.partition_id AND sp.epoch = r.epoch
			WHERE r.id > ?`, holder, newest-5000).Scan(&fired, &byLeader); err != nil {
			return false, err
		}
		var leaderJobs int
		if err := c.sql.QueryRow(`SELECT COUNT(*) FROM job j JOIN scheduler_partition sp ON sp.id = j.partition_id
			WHERE sp.holder = ? AND j.enabled = 1 AND j.next_fire_at IS NOT NULL`, holder).Scan(&leaderJobs); err != nil {
			return false, err
		}
		if !fired.Valid || now-fired.Int64 > 2500 || leaderJobs > 0 && (!byLeader.Valid || now-byLeader.Int64 > 2500) {
			return false, fmt.Errorf("leader %s (epoch %d, %d partitions, %d jobs to fire): newest run fired by a current owner %v, by the leader %v (now %d)",
				holder, epoch, owned, leaderJobs, fired, byLeader, now)
		}
		return true, nil
	}, "no replica leads and fires")
	return epoch, c.admins[holder]
}

// leaderRow reads the leader row; an error when it names no running
// replica.
func (c *cluster) leaderRow() (int64, string, error) {
	var epoch int64
	var holder string
	if err := c.sql.QueryRow("SELECT epoch, holder FROM leader WHERE id = 1").Scan(&epoch, &holder); err != nil {
		return 0, "", err
	}
	if a := c.admins[holder]; a == nil || a.dead || a.Frozen() {
		return 0, "", fmt.Errorf("the leader row names %q (epoch %d), which is not running", holder, epoch)
	}
	return epoch, holder, nil
}

// ownedBy returns the partitions holder owns now, with their epochs,
// waiting up to 30s for it to own some (a replica that just joined gets
// its share within a session timeout).
func (c *cluster) ownedBy(holder string) map[int]int64 {
	c.t.Helper()
	owned := map[int]int64{}
	testenv.WaitFor(c.t, 30*time.Second, func() (bool, error) {
		rows, err := c.sql.Query("SELECT id, epoch FROM scheduler_partition WHERE holder = ?", holder)
		if err != nil {
			return false, err
		}
		defer rows.Close()
		clear(owned)
		for rows.Next() {
			var p int
			var e int64
			if err := rows.Scan(&p, &e); err != nil {
				return false, err
			}
			owned[p] = e
		}
		return len(owned) > 0, rows.Err()
	}, holder+" owns no partition")
	return owned
}

// ownerOf returns the running replica that owns the partition of job id.
func (c *cluster) ownerOf(id int64) *admin {
	c.t.Helper()
	var holder string
	testenv.WaitFor(c.t, 30*time.Second, func() (bool, error) {
		err := c.sql.QueryRow(`SELECT sp.holder FROM job j JOIN scheduler_partition sp ON sp.id = j.partition_id WHERE j.id = ?`, id).Scan(&holder)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		a := c.admins[holder]
		return err == nil && a != nil && !a.dead && !a.Frozen(), err
	}, fmt.Sprintf("a running replica owns the partition of job %d", id))
	return c.admins[holder]
}

// firstRunTakenOver returns the earliest run with id > afterID of a job
// in one of the partitions of owned fired under another epoch than owned
// gives that partition: the first firing of a successor there.
func (c *cluster) firstRunTakenOver(afterID int64, owned map[int]int64) (createdAt, runEpoch int64, ok bool, err error) {
	var cond []string
	args := []any{afterID}
	for p, e := range owned {
		cond = append(cond, "(j.partition_id = ? AND r.epoch <> ?)")
		args = append(args, p, e)
	}
	err = c.sql.QueryRow(`SELECT r.created_at, r.epoch FROM job_run r JOIN job j ON j.id = r.job_id
		WHERE r.id > ? AND r.trigger_kind IN ('cron', 'catch_up') AND (`+strings.Join(cond, " OR ")+`)
		ORDER BY r.created_at, r.id LIMIT 1`, args...).Scan(&createdAt, &runEpoch)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, false, nil
	}
	return createdAt, runEpoch, err == nil, err
}

// staleInPartitions counts the runs (id > afterID) that the disrupted
// admin of p fired in one of its partitions under its epoch there after a
// successor's claim of that partition was seen committed; moved is how
// many of its partitions were seen claimed by another.
func (c *cluster) staleInPartitions(p *phase, afterID int64) (n int, last int64, moved int) {
	c.t.Helper()
	seen := map[int]time.Time{}
	for _, o := range c.parts.Observed() {
		if old, ok := p.owned[o.Partition]; ok && o.Epoch > old && o.SeenAt.After(p.at) {
			if _, dup := seen[o.Partition]; !dup {
				seen[o.Partition] = o.SeenAt
			}
		}
	}
	for part, at := range seen {
		var k int
		var l int64
		require.NoError(c.t, c.sql.QueryRow(`SELECT COUNT(*), COALESCE(MAX(r.created_at), 0) FROM job_run r JOIN job j ON j.id = r.job_id
			WHERE r.id > ? AND j.partition_id = ? AND r.epoch = ? AND r.created_at > ?`, afterID, part, p.owned[part], at.UnixMilli()).Scan(&k, &l))
		n += k
		last = max(last, l)
	}
	return n, last, len(seen)
}

// firstRunAbove returns the earliest run with id > afterID and an epoch
// larger than epoch.
func (c *cluster) firstRunAbove(afterID, epoch int64) (createdAt, runEpoch int64, ok bool, err error) {
	err = c.sql.QueryRow(`SELECT created_at, epoch FROM job_run WHERE id > ? AND epoch > ?
		ORDER BY created_at, id LIMIT 1`, afterID, epoch).Scan(&createdAt, &runEpoch)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, false, nil
	}
	return createdAt, runEpoch, err == nil, err
}

// waitRunAfter waits until some run was created at or after atMS
// (database clock).
func (c *cluster) waitRunAfter(afterID int64, at time.Time, timeout time.Duration, what string) {
	c.t.Helper()
	testenv.WaitFor(c.t, timeout, func() (bool, error) {
		var n int
		err := c.sql.QueryRow("SELECT COUNT(*) FROM job_run WHERE id > ? AND created_at >= ?", afterID, at.UnixMilli()).Scan(&n)
		return n > 0, err
	}, what)
}

// waitCaughtUp waits until no enabled job is more than 2s overdue.
func (c *cluster) waitCaughtUp(timeout time.Duration) {
	c.t.Helper()
	testenv.WaitFor(c.t, timeout, func() (bool, error) {
		var late int
		err := c.sql.QueryRow(`SELECT COUNT(*) FROM job WHERE enabled = 1 AND app = ?
			AND next_fire_at < `+c.db.nowMS()+` - 2000`, jobApp).Scan(&late)
		if err == nil && late > 0 {
			err = fmt.Errorf("%d jobs are more than 2s overdue", late)
		}
		return err == nil, err
	}, "DEFECT: the leader did not catch up with the due jobs")
}

// maxPause returns the longest stretch without a new run from at to the
// last run with id > afterID, and the largest delay between a run's
// scheduled time and its creation among those runs (negative: created
// ahead of time).
func (c *cluster) maxPause(afterID int64, at time.Time) (pause, delay time.Duration) {
	c.t.Helper()
	rows, err := c.sql.Query("SELECT created_at, MAX(created_at - scheduled_at) FROM job_run WHERE id > ? GROUP BY created_at ORDER BY created_at", afterID)
	require.NoError(c.t, err)
	defer rows.Close()
	prev, gap, late := at.UnixMilli(), int64(0), int64(math.MinInt64)
	for rows.Next() {
		var ts, d int64
		require.NoError(c.t, rows.Scan(&ts, &d))
		gap = max(gap, ts-prev)
		prev = max(prev, ts)
		late = max(late, d)
	}
	require.NoError(c.t, rows.Err())
	if late == math.MinInt64 {
		late = 0
	}
	return time.Duration(gap) * time.Millisecond, time.Duration(late) * time.Millisecond
}

// createJobs inserts n jobs firing every second and returns their first
// scheduled time (Unix ms).
func (c *cluster) createJobs(n int) int64 {
	c.t.Helper()
	now, err := c.dbNowMS()
	require.NoError(c.t, err)
	// The first firing is the first whole second after created_at, as for
	// a job created through the API.
	first := (now/1000 + 1) * 1000
	const cols = `(app, name, description, handler, cron_expr, time_zone, misfire_policy, overlap_policy,
		misfire_threshold_ms, max_catch_up, slot_count, slot_params, params, timeout_ms, retry_max, retry_backoff_ms,
		enabled, next_fire_at, created_at, updated_at, version)`
	for lo := 0; lo < n; lo += 500 {
		hi := min(lo+500, n)
		var q strings.Builder
		q.WriteString("INSERT INTO job " + cols + " VALUES ")
		args := make([]any, 0, 6*(hi-lo))
		for i := lo; i < hi; i++ {
			if i > lo {
				q.WriteString(", ")
			}
			// Even jobs: a 2s threshold, so outages go through catch-up.
			// Odd jobs: one hour, so every firing stays on time.
			threshold := int64(2000)
			if i%2 == 1 {
				threshold = 3_600_000
			}
			q.WriteString("(?, ?, '', 'demo.hello', '* * * * * *', 'UTC', 'catch_up', 'allow', ?, 1000, 1, '', '', 0, 0, 1000, 1, ?, ?, ?, 1)")
			args = append(args, jobApp, fmt.Sprintf("every-second-%04d", i), threshold, first, now, now)
		}
		// The leader may already be claiming the first jobs: InnoDB can
		// pick this insert as a deadlock victim. The statement was rolled
		// back as a whole, so it is run again.
		var execErr error
		err := poll(30*time.Second, func() (bool, error) {
			_, execErr = c.sql.Exec(q.String(), args...)
			if c.db.transient(execErr) {
				return false, execErr
			}
			return true, nil
		})
		require.NoError(c.t, err)
		require.NoError(c.t, execErr)
	}
	// Their partitions, as an admin would fill them within a second.
	storetest.FillJobPartitions(c.t, c.sql, c.db.driver())
	return first
}

// pause lets the cluster run undisturbed for d. This is not
// synchronisation: the point is to accumulate firings under the current
// leader (or to keep a process stopped), so a plain timer is right.
func pause(d time.Duration) {
	t := time.NewTimer(d)
	<-t.C
}

// poll is testenv.WaitFor without stopping the test: it returns an error
// after timeout, for the waits whose failure is a product defect to report
// before the test goes on.
func poll(timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	delay := 10 * time.Millisecond
	var last error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("still false after %s (last error: %v)", timeout, last)
		}
		pause(min(delay, left))
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// lockDiagnostics lists the open transactions, whose replica they belong
// to and what they wait for, to explain a successor that cannot claim its
// epoch.
func (c *cluster) lockDiagnostics() string { return c.db.diagnostics(c.sql) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// events are the log messages worth showing per phase.
var events = regexp.MustCompile(`coord: (elected leader|term ended|zookeeper unreachable|disconnected from zookeeper while leading|` +
	`reconnected within the session|new zookeeper session|zookeeper reported the session expired|zookeeper gave a new session|election failed)|` +
	`epoch fence refused|not leading this term|cannot record leader epoch|scheduler tick failed|admin stopping`)

// marks records how many output lines each process had printed.
type marks map[*testenv.Process]int

// mark returns the current output length of every process.
func (c *cluster) mark() marks {
	m := marks{}
	for _, a := range c.procs {
		m[a.Process] = strings.Count(a.Output(), "\n")
	}
	return m
}

// eventsSince returns the interesting log messages printed since m, per
// replica, with repetitions counted.
func (c *cluster) eventsSince(m marks) []string {
	var out []string
	for _, a := range c.procs {
		lines := strings.Split(a.Output(), "\n")
		lines = lines[min(m[a.Process], len(lines)):]
		var order []string
		count := map[string]int{}
		for _, l := range lines {
			if !events.MatchString(l) {
				continue
			}
			msg := eventText(l)
			if count[msg] == 0 {
				order = append(order, msg)
			}
			count[msg]++
		}
		for _, msg := range order {
			s := a.id + ": " + msg
			if n := count[msg]; n > 1 {
				s += fmt.Sprintf(" (x%d)", n)
			}
			out = append(out, s)
		}
	}
	return out
}

var (
	msgRE   = regexp.MustCompile(`msg="([^"]*)"|msg=(\S+)`)
	attrREs = func() map[string]*regexp.Regexp {
		m := map[string]*regexp.Regexp{}
		for _, key := range eventAttrs {
			m[key] = regexp.MustCompile(` ` + key + `=("[^"]*"|\S+)`)
		}
		return m
	}()
	eventAttrs = []string{"epoch", "cause", "within", "recorded_epoch"}
)

// eventText reduces a slog text line to its message and the attributes
// that tell terms apart (epoch, cause), so that repeats can be counted.
func eventText(l string) string {
	var parts []string
	if m := msgRE.FindStringSubmatch(l); m != nil {
		parts = append(parts, m[1]+m[2])
	}
	for _, key := range eventAttrs {
		if m := attrREs[key].FindStringSubmatch(l); m != nil {
			parts = append(parts, key+"="+m[1])
		}
	}
	return strings.Join(parts, " ")
}

// grep returns the lines of s that match re.
func grep(s string, re *regexp.Regexp) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}
