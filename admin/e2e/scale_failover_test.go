package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// The failover of bench-scale (issues 31 and 38): with two admins or more,
// the leader (the first admin) is killed with SIGKILL in the middle of the
// window, and the table says how long until another admin led, until the
// first run started after the kill (only the leader starts runs), until
// the others had claimed every partition the dead admin held, and the
// start lag p99 of the runs due in the minute before the kill and in the
// minute after it — of the dead admin's partitions and of the others'.
// Duplicates and gaps are the window's own figures (firings run twice, the
// gap audit's alarms).

// failoverLag is the span before and after the kill whose runs' start lag
// the table gives.
const failoverLag = time.Minute

// deadAdmin is what an admin killed on purpose had used when it died.
type deadAdmin struct {
	cpu time.Duration
	rss int64
}

// failoverResult is what the kill of the leader showed.
type failoverResult struct {
	victim string
	at     time.Time // the kill, database clock
	parts  []int     // the partitions the victim held
	// leading, started and claimed are the time from the kill until another
	// admin logged that it leads, until the first run started after the
	// kill, and until the others had claimed the last of the victim's
	// partitions (-1: not by the end of the window).
	leading, started, claimed time.Duration
	// lagBefore is the start lag p99 of the runs due in the failoverLag
	// before the kill; lagMoved and lagKept of those due in the one after
	// it, of the victim's partitions and of the others'; n* count them.
	lagBefore, lagMoved, lagKept time.Duration
	nBefore, nMoved, nKept       int
}

// adminCPU is an admin's CPU time so far (when it was killed, for one the
// run killed).
func (env *herdEnv) adminCPU(tb testing.TB, p *testenv.Process) time.Duration {
	if d, ok := env.killed[p]; ok {
		return d.cpu
	}
	return cpuTime(tb, p.PID())
}

// adminRSS is an admin's peak resident memory (when it was killed, for one
// the run killed).
func (env *herdEnv) adminRSS(tb testing.TB, p *testenv.Process) int64 {
	if d, ok := env.killed[p]; ok {
		return d.rss
	}
	return peakRSS(tb, p.PID())
}

// logTime reads the time= field of a log line of an admin.
var logTime = regexp.MustCompile(`\btime=(\S+)`)

// killLeader kills the leading admin (the first) with SIGKILL, waits until
// another admin leads (at most a minute) and returns what it saw; the API
// is called on the second admin from then on.
func (env *herdEnv) killLeader(tb testing.TB) *failoverResult {
	tb.Helper()
	victim := env.admins[0]
	f := &failoverResult{victim: env.ids[0]}
	rows, err := env.db.Query(`SELECT id FROM scheduler_partition WHERE holder = ? ORDER BY id`, f.victim)
	require.NoError(tb, err)
	for rows.Next() {
		var id int
		require.NoError(tb, rows.Scan(&id))
		f.parts = append(f.parts, id)
	}
	require.NoError(tb, rows.Err())
	require.NoError(tb, rows.Close())
	require.NotEmpty(tb, f.parts, "the leader %s holds no partition", f.victim)
	if env.killed == nil {
		env.killed = map[*testenv.Process]deadAdmin{}
	}
	env.killed[victim] = deadAdmin{cpu: cpuTime(tb, victim.PID()), rss: peakRSS(tb, victim.PID())}
	f.at = env.dbNow(tb)
	require.NoError(tb, victim.Signal(syscall.SIGKILL))
	select {
	case <-victim.Done():
	case <-time.After(10 * time.Second):
		tb.Fatalf("the leader %s did not die within 10 s of SIGKILL", f.victim)
	}
	env.url = env.urls[1]

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lines := make(chan string, len(env.admins))
	for _, a := range env.admins[1:] {
		go func() {
			if line, err := a.WaitForLine(ctx, "msg=leading"); err == nil {
				lines <- line
			}
		}()
	}
	select {
	case line := <-lines:
		m := logTime.FindStringSubmatch(line)
		require.NotNil(tb, m, "no time in the log line %q", line)
		at, err := time.Parse(time.RFC3339Nano, m[1])
		require.NoError(tb, err, "the time of the log line %q", line)
		f.leading = at.Sub(f.at)
	case <-ctx.Done():
		tb.Fatalf("no admin led within a minute after the leader %s was killed", f.victim)
	}
	return f
}

// measureFailover reads, once the window is over, the figures of f from the
// database.
func (env *herdEnv) measureFailover(tb testing.TB, f *failoverResult, end time.Time) {
	tb.Helper()
	kill := f.at.UnixMilli()
	parts := make([]string, len(f.parts))
	for i, p := range f.parts {
		parts[i] = strconv.Itoa(p)
	}
	in := strings.Join(parts, ",")
	since := func(q string, args ...any) time.Duration {
		var at sql.NullInt64
		require.NoError(tb, env.db.QueryRow(q, args...).Scan(&at))
		if !at.Valid || at.Int64 > end.UnixMilli() {
			return -1
		}
		return msDur(at.Int64 - kill)
	}
	f.started = since(`SELECT MIN(started_at) FROM job_run WHERE started_at > ?`, kill)
	var stillHeld int
	require.NoError(tb, env.db.QueryRow(`SELECT COUNT(*) FROM scheduler_partition WHERE id IN (`+in+`) AND (holder = ? OR claimed_ms <= ?)`,
		f.victim, kill).Scan(&stillHeld))
	f.claimed = -1
	if stillHeld == 0 {
		f.claimed = since(`SELECT MAX(claimed_ms) FROM scheduler_partition WHERE id IN (` + in + `)`)
	}
	lag := func(from, to time.Time, filter string) (time.Duration, int) {
		lags := env.sorted(tb, `SELECT COALESCE(LEAST(MIN(a.started_at), ?), ?) - r.scheduled_at
			FROM job_run r JOIN job j ON j.id = r.job_id LEFT JOIN slot_attempt a ON a.run_id = r.id AND a.current = 1
			WHERE r.app = ? AND r.scheduled_at >= ? AND r.scheduled_at < ? AND r.status <> 'skipped'`+filter+`
			GROUP BY r.id, r.scheduled_at ORDER BY 1`, to.UnixMilli(), to.UnixMilli(), herdApp, from.UnixMilli(), to.UnixMilli())
		return msDur(percentile(lags, 0.99)), len(lags)
	}
	after := f.at.Add(failoverLag)
	if after.After(end) {
		after = end
	}
	f.lagBefore, f.nBefore = lag(f.at.Add(-failoverLag), f.at, "")
	f.lagMoved, f.nMoved = lag(f.at, after, " AND j.partition_id IN ("+in+")")
	f.lagKept, f.nKept = lag(f.at, after, " AND j.partition_id NOT IN ("+in+")")
}

// rows are f as rows of the scale table.
func (f *failoverResult) rows(t0 time.Time) string {
	d := func(v time.Duration) string {
		if v < 0 {
			return "not by the end of the window"
		}
		return v.Round(100 * time.Millisecond).String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| failover: kill -9 of the leader (%s, %d partitions) %s into the window: another admin led after / the first run started after / its partitions all claimed by the others after | %s / %s / %s |\n",
		f.victim, len(f.parts), f.at.Sub(t0).Round(time.Second), d(f.leading), d(f.started), d(f.claimed))
	fmt.Fprintf(&b, "| start lag p99 of the runs due in the %s before the kill / after it, of its partitions / of the others' | %s (%d runs) / %s (%d) / %s (%d) |\n",
		failoverLag, f.lagBefore, f.nBefore, f.lagMoved, f.nMoved, f.lagKept, f.nKept)
	return b.String()
}
