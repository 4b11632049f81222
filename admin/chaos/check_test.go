package chaos

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
)

// result is what the final checks counted.
type result struct {
	runs          int
	skipped       int
	byTrigger     map[string]int
	duplicateKeys int
	gapJobs       int // jobs whose scheduled seconds are not covered exactly once
	epochless     int
	staleWrites   int // runs of an older epoch created after a newer epoch was seen claimed
	// partitionStale counts the fired runs of a partition recorded with an
	// older epoch of it, created after a newer epoch of it was seen claimed.
	partitionStale int
	partitionRuns  int // runs fired under a partition's epoch
	epochs         []int64
	maxDelay       time.Duration // largest created_at - scheduled_at over all runs
}

// check runs the SQL invariants once every admin has stopped. first is the
// first scheduled time of every job; stoppedAt is when the admins were
// told to stop (all jobs had caught up just before).
func (c *cluster) check(first int64, stoppedAt time.Time, jobs int) result {
	t := c.t
	t.Helper()
	res := result{byTrigger: map[string]int{}}

	// 1. The run key. Zero by construction (UNIQUE(job_id, scheduled_at)),
	// checked all the same.
	require.NoError(t, c.sql.QueryRow(`SELECT COUNT(*) FROM (SELECT job_id, scheduled_at, COUNT(*) AS n FROM job_run
		GROUP BY job_id, scheduled_at HAVING COUNT(*) > 1) d`).Scan(&res.duplicateKeys))
	if res.duplicateKeys > 0 {
		t.Errorf("DEFECT: %d run keys (job_id, scheduled_at) have more than one job_run row", res.duplicateKeys)
	}

	// 2. Statuses and triggers: without executors a run stays pending, or
	// is recorded skipped.
	rows, err := c.sql.Query("SELECT status, trigger_kind, COUNT(*) FROM job_run GROUP BY status, trigger_kind ORDER BY status, trigger_kind")
	require.NoError(t, err)
	for rows.Next() {
		var status, trigger string
		var n int
		require.NoError(t, rows.Scan(&status, &trigger, &n))
		res.runs += n
		res.byTrigger[trigger] += n
		switch status {
		case "pending":
		case "skipped":
			res.skipped += n
		default:
			t.Errorf("DEFECT: %d runs (trigger %s) have status %q; without executors only pending or skipped is possible", n, trigger, status)
		}
	}
	require.NoError(t, rows.Err())
	rows.Close()
	if res.skipped > 0 {
		// catch_up with max_catch_up 1000 fires every late second of these
		// outages; a skipped row is recorded, not lost, but unexpected.
		t.Logf("chaos: NOTE: %d firings were recorded as skipped although catch_up allows 1000", res.skipped)
	}

	// 3. Every scheduled second from the first firing up to the final
	// next_fire_at has exactly one row, for every job.
	type jobCover struct {
		id                       int64
		name                     string
		next, n, lo, hi, offSecs int64
	}
	var covers []jobCover
	rows, err = c.sql.Query(`SELECT j.id, j.name, COALESCE(j.next_fire_at, 0), COUNT(r.id), COALESCE(MIN(r.scheduled_at), 0),
		COALESCE(MAX(r.scheduled_at), 0), COALESCE(SUM(CASE WHEN r.scheduled_at % 1000 <> 0 THEN 1 ELSE 0 END), 0)
		FROM job j LEFT JOIN job_run r ON r.job_id = j.id WHERE j.app = ? GROUP BY j.id, j.name, j.next_fire_at ORDER BY j.id`, jobApp)
	require.NoError(t, err)
	for rows.Next() {
		var jc jobCover
		require.NoError(t, rows.Scan(&jc.id, &jc.name, &jc.next, &jc.n, &jc.lo, &jc.hi, &jc.offSecs))
		covers = append(covers, jc)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	require.Len(t, covers, jobs, "jobs of app %s", jobApp)
	minNext := stoppedAt.UnixMilli() - 2000
	var reported int
	for _, jc := range covers {
		want := (jc.next - first) / 1000
		ok := jc.lo == first && jc.hi == jc.next-1000 && jc.n == want && jc.offSecs == 0 && jc.next >= minNext
		if ok {
			continue
		}
		res.gapJobs++
		if reported++; reported > 5 {
			continue
		}
		t.Errorf("DEFECT: job %d (%s): %d runs, scheduled %s..%s, next_fire_at %s; want %d runs covering %s..%s one per second "+
			"and next_fire_at >= %s; %s", jc.id, jc.name, jc.n, hms(jc.lo), hms(jc.hi), hms(jc.next), want, hms(first),
			hms(jc.next-1000), hms(minNext), c.missing(jc.id, first, jc.next))
	}
	if res.gapJobs > 0 {
		t.Errorf("DEFECT: %d of %d jobs have gaps or extra runs (first 5 shown)", res.gapJobs, jobs)
	}

	// 4. Every run records the epoch of the leader that created it.
	require.NoError(t, c.sql.QueryRow("SELECT COUNT(*) FROM job_run WHERE epoch <= 0").Scan(&res.epochless))
	if res.epochless > 0 {
		t.Errorf("DEFECT: %d runs record no leader epoch", res.epochless)
	}

	// 5. The fence. Once a claim of epoch E was seen committed (SeenAt), no
	// run of an epoch below E may have been created: a transaction of the
	// old leader either committed before the claim (the claim waits for
	// its shared lock on the leader row) or was refused. created_at is the
	// database clock when the insert ran, so it is before that commit.
	obs := c.leader.Observed()
	seen := map[int64]bool{}
	for _, o := range obs {
		seen[o.Epoch] = true
		t.Logf("chaos: leader change seen: epoch %d holder %s claimed %s seen %s",
			o.Epoch, o.Holder, hms(o.SinceMS), o.SeenAt.Format("15:04:05.000"))
	}
	for i, o := range obs {
		if i == 0 {
			continue
		}
		var stale, inFlight int
		var last int64
		require.NoError(t, c.sql.QueryRow(`SELECT COUNT(*), COALESCE(MAX(created_at), 0) FROM job_run WHERE epoch < ? AND created_at > ?`,
			o.Epoch, o.SeenAt.UnixMilli()).Scan(&stale, &last))
		require.NoError(t, c.sql.QueryRow(`SELECT COUNT(*) FROM job_run WHERE epoch < ? AND created_at > ?`,
			o.Epoch, o.SinceMS).Scan(&inFlight))
		if stale > 0 {
			res.staleWrites += stale
			t.Errorf("DEFECT: %d runs of an epoch below %d were created after %s's claim of epoch %d was committed (seen %s); the last at %s",
				stale, o.Epoch, o.Holder, o.Epoch, o.SeenAt.Format("15:04:05.000"), hms(last))
		}
		if inFlight > stale {
			t.Logf("chaos: %d runs of an older epoch were inserted while the claim of epoch %d waited for their transaction (allowed)",
				inFlight-stale, o.Epoch)
		}
	}
	c.checkPartitionFence(&res)
	rows, err = c.sql.Query("SELECT epoch, COUNT(*), MIN(created_at), MAX(created_at) FROM job_run WHERE epoch < 4294967296 GROUP BY epoch ORDER BY epoch")
	require.NoError(t, err)
	for rows.Next() {
		var epoch, lo, hi int64
		var n int
		require.NoError(t, rows.Scan(&epoch, &n, &lo, &hi))
		res.epochs = append(res.epochs, epoch)
		note := ""
		if !seen[epoch] {
			note = " (this epoch was never seen in the leader row)"
		}
		t.Logf("chaos: epoch %d created %d runs from %s to %s%s", epoch, n, hms(lo), hms(hi), note)
	}
	require.NoError(t, rows.Err())
	rows.Close()

	var delay int64
	require.NoError(t, c.sql.QueryRow("SELECT COALESCE(MAX(created_at - scheduled_at), 0) FROM job_run").Scan(&delay))
	res.maxDelay = time.Duration(delay) * time.Millisecond

	// Alarms raised meanwhile (missed firings, for example), for the
	// report; older schemas have no alarm table.
	if rows, err := c.sql.Query("SELECT kind, COUNT(*) FROM alarm_event GROUP BY kind ORDER BY kind"); err == nil {
		var kinds []string
		for rows.Next() {
			var kind string
			var n int
			if rows.Scan(&kind, &n) == nil {
				kinds = append(kinds, fmt.Sprintf("%s x%d", kind, n))
			}
		}
		if err := rows.Err(); err != nil {
			kinds = append(kinds, "(cut short: "+err.Error()+")")
		}
		rows.Close()
		t.Logf("chaos: alarms raised: %s", firstN(kinds, 20))
	}

	c.scanLogs()
	return res
}

// missing lists (the first few) scheduled seconds in [from, to) without a
// run of job id, and the runs outside that range.
func (c *cluster) missing(id, from, to int64) string {
	rows, err := c.sql.Query("SELECT scheduled_at FROM job_run WHERE job_id = ? ORDER BY scheduled_at", id)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	have := map[int64]bool{}
	var outside []string
	for rows.Next() {
		var at int64
		if err := rows.Scan(&at); err != nil {
			return err.Error()
		}
		have[at] = true
		if at < from || at >= to || at%1000 != 0 {
			outside = append(outside, hms(at))
		}
	}
	if err := rows.Err(); err != nil {
		return err.Error()
	}
	var gaps []string
	for at := from; at < to; at += 1000 {
		if !have[at] {
			gaps = append(gaps, hms(at))
		}
	}
	return fmt.Sprintf("missing seconds (%d): %s; runs outside the range: %s", len(gaps), firstN(gaps, 10), firstN(outside, 10))
}

var (
	raceLine   = regexp.MustCompile(`WARNING: DATA RACE|^panic:|fatal error:`)
	fenceLine  = regexp.MustCompile(`epoch fence refused a write`)
	tickFailed = regexp.MustCompile(`scheduler tick failed`)
)

// scanLogs reports races and panics in any admin output (a defect) and
// counts the interesting lines per process.
func (c *cluster) scanLogs() {
	for _, a := range c.procs {
		out := a.Output()
		if bad := grep(out, raceLine); len(bad) > 0 {
			c.t.Errorf("DEFECT: %s (pid %d) printed %d race/panic lines, first: %s", a.id, a.PID(), len(bad), bad[0])
		}
		fences := grep(out, fenceLine)
		c.t.Logf("chaos: %s (pid %d): %d terms led, %d epoch-fence refusals, %d failed ticks", a.id, a.PID(),
			strings.Count(out, `msg="coord: elected leader"`), len(fences), len(grep(out, tickFailed)))
		for _, l := range fences {
			c.t.Logf("chaos:   %s: %s", a.id, compactLog(l))
		}
	}
}

func hms(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return time.UnixMilli(ms).Format("15:04:05.000")
}

func firstN(s []string, n int) string {
	if len(s) == 0 {
		return "none"
	}
	if len(s) > n {
		return strings.Join(s[:n], " ") + fmt.Sprintf(" ... (%d more)", len(s)-n)
	}
	return strings.Join(s, " ")
}

// partitionEpochs is where the epochs of partitions start: term<<32 | n
// (partition.NextEpoch) is at least 2^32; a leader epoch is below.
const partitionEpochs = 1 << 32

// checkPartitionFence is check 5 per partition: once a claim of epoch E
// of partition p was seen committed, no run of a job of p may have been
// fired under an epoch of p below E (a former owner's transaction either
// committed before the claim, which waits for its shared lock on the
// partition's row, or was refused). Fired runs are those of trigger cron
// and catch_up recorded with a partition epoch (a child run records its
// parent's epoch, of another partition).
func (c *cluster) checkPartitionFence(res *result) {
	t := c.t
	t.Helper()
	obs := c.parts.Observed()
	type fired struct {
		partition      int
		epoch, created int64
	}
	rows, err := c.sql.Query(`SELECT j.partition_id, r.epoch, r.created_at FROM job_run r JOIN job j ON j.id = r.job_id
		WHERE r.epoch >= ? AND r.trigger_kind IN ('cron', 'catch_up') AND j.partition_id IS NOT NULL`, partitionEpochs)
	require.NoError(t, err)
	byPart := map[int][]fired{}
	for rows.Next() {
		var f fired
		require.NoError(t, rows.Scan(&f.partition, &f.epoch, &f.created))
		byPart[f.partition] = append(byPart[f.partition], f)
		res.partitionRuns++
	}
	require.NoError(t, rows.Err())
	rows.Close()
	first := map[int]bool{}
	moves := 0
	for _, o := range obs {
		if !first[o.Partition] {
			first[o.Partition] = true // the first seen: nothing older to fence
			continue
		}
		moves++
		stale, inFlight := 0, 0
		var last int64
		for _, f := range byPart[o.Partition] {
			if f.epoch >= o.Epoch {
				continue
			}
			if f.created > o.SeenAt.UnixMilli() {
				stale++
				last = max(last, f.created)
			} else if f.created > o.ClaimedMS {
				inFlight++
			}
		}
		if stale > 0 {
			res.partitionStale += stale
			t.Errorf("DEFECT: partition %d: %d runs of an epoch below %d were fired after %s's claim of it was committed (seen %s); the last at %s",
				o.Partition, stale, o.Epoch, o.Holder, o.SeenAt.Format("15:04:05.000"), hms(last))
		}
		if inFlight > 0 {
			t.Logf("chaos: partition %d: %d runs of an older epoch were fired while the claim of epoch %d waited for their transaction (allowed)",
				o.Partition, inFlight, o.Epoch)
		}
	}
	t.Logf("chaos: %d runs fired under partition epochs; %d partition hand-overs seen (%d first claims)", res.partitionRuns, moves, len(first))
}
