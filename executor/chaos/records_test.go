package chaos

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	// slots of every job.
	slots = 256
	// batch is the records.Config.BatchSize of the demo handlers here:
	// small, so that a slot commits (Transactional) or marks (External)
	// several times and a crash lands between two of them.
	batch = 20
)

// form is the size of the test: see the package documentation.
type form struct {
	name    string
	records int64
	// ledgerMS and externalMS are the handlers' ms_per_record: long
	// enough for the disruptions to hit a running run.
	ledgerMS, externalMS int
}

func chosenForm(t *testing.T) form {
	f := form{name: "short", records: 20_000, ledgerMS: 8, externalMS: 20}
	if os.Getenv("SHARDJOB_CHAOS") == "long" {
		f = form{name: "long", records: 200_000, ledgerMS: 1, externalMS: 2}
	}
	if v := os.Getenv("SHARDJOB_CHAOS_RECORDS"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		require.NoError(t, err, "SHARDJOB_CHAOS_RECORDS")
		require.Positive(t, n, "SHARDJOB_CHAOS_RECORDS")
		f.records = n
	}
	return f
}

// summary collects what the phases measured.
type summary struct {
	lines []string
}

func (s *summary) add(format string, args ...any) {
	s.lines = append(s.lines, fmt.Sprintf(format, args...))
}

// TestChaosRecordsExactlyOnce is the scenario of the package
// documentation, on a private MariaDB.
func TestChaosRecordsExactlyOnce(t *testing.T) { testRecordsExactlyOnce(t, startMariaDB) }

// TestChaosRecordsExactlyOncePostgres is the same scenario on a private
// PostgreSQL server.
func TestChaosRecordsExactlyOncePostgres(t *testing.T) { testRecordsExactlyOnce(t, startPostgreSQL) }

func testRecordsExactlyOnce(t *testing.T, startDB func(testing.TB) business) {
	f := chosenForm(t)
	start := time.Now()
	c := newCluster(t, startDB)
	c.WaitOnline(c.startExecutor(), c.startExecutor(), c.startExecutor())
	t.Logf("form %s: %d records over %d slots, 3 executors of capacity %d, databases on %s", f.name, f.records, slots, capacity, c.db.name())

	var sum summary
	job, first := c.transactionalRun(f, &sum)
	c.repeatRun(f, job, first, &sum)
	c.externalRun(f, "retry", &sum)
	c.externalRun(f, "skip", &sum)
	c.jobPolicyRun(&sum)

	sum.add("total %s", time.Since(start).Round(time.Millisecond))
	t.Logf("summary:\n  %s", strings.Join(sum.lines, "\n  "))
	fmt.Printf("SUMMARY records-chaos (%s form, %s): %s\n", f.name, c.db.name(), strings.Join(sum.lines, "; "))
}

// transactionalRun is phase 1: demo.ledger with kill -9, a database restart
// and SIGSTOP/SIGCONT, in that order (the restart comes second so that it
// always hits the running run: how long the pause lasts depends on how soon
// the successors of the frozen slots start). It returns the job and its run.
func (c *cluster) transactionalRun(f form, sum *summary) (int64, apitypes.Run) {
	t := c.t
	// One batch transaction at a time per slot: a slot commits its
	// records in steps, so that a kill or a freeze can land between two.
	params := fmt.Sprintf("records=%d;ms_per_record=%d;batch=%d;concurrency=1;scope=job", f.records, f.ledgerMS, batch)
	job := c.createJob("ledger", "demo.ledger", params)
	run, created := c.trigger(job, nil)
	require.True(t, created)
	runStart := time.Now()
	t.Logf("ledger: run %d of job %d triggered (%s)", run.ID, job, params)

	// kill -9 an executor that has booked records of the run.
	victim := c.waitBooking(job, run.ID, f.records, c.alive())
	require.NoError(t, victim.Kill())
	killedAt := time.Now()
	held := runningNow(victim, run.ID) // its output is complete: it was reaped
	require.NotEmpty(t, held, "%s was running no slot when it was killed", victim.Name)
	t.Logf("ledger: kill -9 %s (id %d) at +%s, running %d slots (tokens %v)",
		victim.Name, victim.ID, killedAt.Sub(runStart).Round(time.Millisecond), len(held), tokens(held))
	replacement := c.startExecutor()
	c.WaitOnline(replacement)
	c.WaitAttempts(run.ID, "the killed executor's slots were not moved", func(atts []apitypes.Attempt) error {
		if n := len(on(atts, victim, "assigned", "queued", "running")); n > 0 {
			return fmt.Errorf("%d unfinished current attempts still on %s", n, victim.Name)
		}
		return nil
	})
	moved := time.Since(killedAt)
	t.Logf("ledger: %s's slots moved %s after the kill; replacement %s online", victim.Name, moved.Round(time.Millisecond), replacement.Name)

	// Restart the database server (kill -9, crash recovery) while the run
	// goes on.
	r, _, err := c.Run(run.ID)
	require.NoError(t, err)
	require.False(t, harness.Terminal[r.Status],
		"the run ended (%s) before %s could be restarted: make it longer (ms_per_record)", r.Status, c.db.name())
	downAt := time.Now()
	require.NoError(t, c.db.server().Kill())
	require.NoError(t, c.db.server().Start())
	down := time.Since(downAt)
	t.Logf("ledger: %s killed at +%s and up again after %s (%d/%d slots had succeeded)",
		c.db.name(), downAt.Sub(runStart).Round(time.Millisecond), down.Round(time.Millisecond), r.SlotsSucceeded, r.SlotCount)

	// SIGSTOP another executor that is booking, until it was declared lost
	// and newer tokens took the shard locks of its slots.
	var candidates []*harness.Executor
	for _, e := range c.alive() {
		if e != replacement {
			candidates = append(candidates, e)
		}
	}
	frozen := c.waitBooking(job, run.ID, f.records, candidates)
	require.NoError(t, frozen.Freeze())
	pausedAt := time.Now()
	t.Logf("ledger: SIGSTOP %s (id %d) at +%s", frozen.Name, frozen.ID, pausedAt.Sub(runStart).Round(time.Millisecond))
	testenv.WaitFor(t, waitDeadline, func() (bool, error) {
		list, err := c.Executors()
		if err != nil {
			return false, err
		}
		if st := list[frozen.Name].State; st != "lost" {
			return false, fmt.Errorf("%s is %s", frozen.Name, st)
		}
		return true, nil
	}, "the paused executor was not declared lost")
	lostAt := time.Since(pausedAt)
	t.Logf("ledger: %s declared lost %s after SIGSTOP (3 heartbeat intervals: %s)", frozen.Name, lostAt.Round(time.Millisecond), lostAfter)
	if lostAt > lostAfter+time.Second {
		// Late: list the pushes to the frozen executor, the cause seen
		// before pushes ran in the background (figure only: a timed
		// assertion would be flaky on a loaded machine).
		var pushes []string
		for _, msg := range []string{"push failed", "cancel push failed; the executor learns it at its next heartbeat"} {
			for _, l := range logLines(c.Admin.Process, msg) {
				if l["address"] == frozen.URL && l.Time().After(pausedAt) {
					pushes = append(pushes, l["time"]+" "+msg+": "+firstLine(l["err"]))
				}
			}
		}
		t.Logf("slow loss detection: %s was declared lost %s after SIGSTOP, expected about %s (3 heartbeat intervals); pushes to it that failed meanwhile: %v",
			frozen.Name, lostAt.Round(time.Millisecond), lostAfter, pushes)
	}
	var superseded []apitypes.Attempt // the attempts of the frozen executor that were superseded
	c.WaitAttempts(run.ID, "the paused executor's slots were not moved", func(atts []apitypes.Attempt) error {
		if n := len(on(atts, frozen, "assigned", "queued", "running")); n > 0 {
			return fmt.Errorf("%d unfinished current attempts still on %s", n, frozen.Name)
		}
		superseded = superseded[:0]
		for _, a := range atts {
			if harness.ExecutorOf(a) == frozen.ID && a.Status == "lost" {
				superseded = append(superseded, a)
			}
		}
		return nil
	})
	// The slots it was running when it froze (by its own log, final by
	// now): each must have been superseded as lost.
	started := runningNow(frozen, run.ID)
	require.NotEmpty(t, started, "%s was running no slot when it froze", frozen.Name)
	for _, a := range started {
		require.True(t, containsToken(superseded, a.Token),
			"DEFECT: token %d was running slot %d on %s when it froze, but its attempt was not superseded as lost", a.Token, a.Slot, frozen.Name)
	}
	// The fence in the business database: newer tokens took the shard
	// locks of the slots it had started. A transaction the frozen process
	// had open holds the lock row's shared lock until the server ends it
	// (idleTxTimeout).
	var locks map[int]shardLock
	testenv.WaitFor(t, waitDeadline, func() (bool, error) {
		var err error
		if locks, err = c.lockTokens(job, run.ID); err != nil {
			return false, err
		}
		for _, a := range started {
			if locks[a.Slot].Token <= a.Token {
				return false, fmt.Errorf("slot %d: the shard lock is held by token %d, not by a successor of token %d", a.Slot, locks[a.Slot].Token, a.Token)
			}
		}
		return true, nil
	}, "newer tokens did not take the shard locks of the paused executor's slots")
	fencedAt := time.Since(pausedAt)
	// Fenced: every superseded token whose slot's lock has a newer token
	// (a superseded attempt that never started and whose successor has not
	// started yet may still take the lock legitimately after SIGCONT,
	// before it learns it was cancelled; its rows then precede the
	// successor's, which checkLedger verifies).
	var fenced []apitypes.Attempt
	for _, a := range superseded {
		if locks[a.Slot].Token > a.Token {
			fenced = append(fenced, a)
		}
	}
	snapshot := c.ledgerRowsBy(job, tokens(fenced))
	paused := time.Since(pausedAt)
	require.NoError(t, frozen.Thaw())
	require.Greater(t, paused, lostAfter, "paused for longer than 3 heartbeat intervals")
	var booked int64
	for _, n := range snapshot {
		booked += n
	}
	t.Logf("ledger: %s declared lost %s after SIGSTOP, %d attempts superseded; the shard locks of the %d slots it was running (tokens %v) taken by newer tokens after %s; SIGCONT after %s; %d fenced tokens had booked %d rows",
		frozen.Name, lostAt.Round(time.Millisecond), len(superseded), len(started), tokens(started), fencedAt.Round(time.Millisecond), paused.Round(time.Millisecond), len(fenced), booked)

	// Its handlers wake up, find themselves cancelled or fenced, and end.
	testenv.WaitFor(t, waitDeadline, func() (bool, error) {
		finished := map[int64]bool{}
		for _, l := range logLines(frozen.Process, "slot finished") {
			finished[l.Int("token")] = true
		}
		for _, a := range started {
			if !finished[a.Token] {
				return false, fmt.Errorf("token %d has not finished on %s", a.Token, frozen.Name)
			}
		}
		return true, nil
	}, "the resumed executor's stale slots did not end")
	var stoppedBy []string
	for _, l := range logLines(frozen.Process, "ledger slot stopped") {
		if containsToken(started, l.Int("token")) {
			stoppedBy = append(stoppedBy, fmt.Sprintf("token %s: %s", l["token"], firstLine(l["err"])))
		}
	}
	t.Logf("ledger: after SIGCONT, %s's stale slots ended: %s", frozen.Name, strings.Join(stoppedBy, " | "))

	r, atts, retries := c.finishRun(run.ID)
	require.Equal(t, "succeeded", r.Status, "run %d: %s", run.ID, r.Error)
	took := time.Since(runStart)
	failedAttempts := 0
	for _, a := range atts {
		if a.Status == "failed" {
			failedAttempts++
		}
	}
	requireLost(t, atts, held, victim)
	rep := c.checkLedger(job, f.records, atts)
	steals := c.reportSteals("ledger", run.ID)
	after := c.ledgerRowsBy(job, tokens(fenced))
	require.Equal(t, snapshot, after, "DEFECT: the paused executor's tokens wrote ledger rows after they were fenced (rows per token at SIGCONT vs at the end)")
	t.Logf("ledger: run %d succeeded in %s (%d attempts in all, %d failed, %d API retries); %d ledger rows by %d tokens, by attempt status %v; %d slots written by two tokens or more",
		run.ID, took.Round(time.Millisecond), len(atts), failedAttempts, retries, f.records, rep.Tokens, rep.RowsByStatus, rep.SlotsShared)
	sum.add("ledger: %d records exactly once through kill -9 (moved in %s), SIGSTOP %s (lost after %s, fenced after %s), %s kill+start (%s down); run %s in %s with %d attempts (%d failed, %d API retries); rows by attempt status %v; stealing: %s",
		f.records, moved.Round(time.Millisecond), paused.Round(time.Millisecond), lostAt.Round(time.Millisecond), fencedAt.Round(time.Millisecond),
		c.db.name(), down.Round(time.Millisecond), r.Status, took.Round(time.Millisecond), len(atts), failedAttempts, retries, rep.RowsByStatus, steals)
	return job, r
}

// repeatRun is phase 2: the same run key again, a retry of the succeeded
// run, and a new firing in the same (job) scope: nothing is processed twice.
func (c *cluster) repeatRun(f form, job int64, first apitypes.Run, sum *summary) {
	t := c.t
	before := c.dedupState(job, "job")
	_, attsBefore, err := c.Run(first.ID)
	require.NoError(t, err)

	again, created := c.trigger(job, &first.ScheduledAt)
	require.False(t, created, "DEFECT: a trigger with the first run's scheduled_at created a second run of the same firing")
	require.Equal(t, first.ID, again.ID, "the same run key returns the existing run")
	require.Equal(t, "succeeded", again.Status)

	code, err := c.API.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/retry", first.ID), nil, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusConflict, code, "a succeeded run has nothing to retry")

	// A new firing of the job, in the same job scope: every record is
	// done already.
	at := first.ScheduledAt.Add(-time.Hour)
	second, created := c.trigger(job, &at)
	require.True(t, created)
	start := time.Now()
	r, atts, retries := c.finishRun(second.ID)
	require.Equal(t, "succeeded", r.Status, "run %d: %s", second.ID, r.Error)
	var processed, skipped int64
	for _, a := range harness.Current(atts) {
		processed += a.Processed
		skipped += a.Skipped
	}
	require.Zero(t, processed, "DEFECT: a new firing in the job scope processed records again")
	require.Equal(t, f.records, skipped, "every record is skipped as done")

	after := c.dedupState(job, "job")
	require.Equal(t, before, after, "DEFECT: dedup or ledger rows changed after the repeats")
	_, attsAfter, err := c.Run(first.ID)
	require.NoError(t, err)
	require.Equal(t, attsBefore, attsAfter, "the first run got no new attempt")
	t.Logf("repeat: trigger with the same scheduled_at returned run %d (created=false); retry refused (409); new firing run %d (%d API retries) skipped all %d records in %s; ledger %d rows, dedup %v unchanged",
		again.ID, second.ID, retries, skipped, time.Since(start).Round(time.Millisecond), after.LedgerRows, after.ByStatus)
	sum.add("repeat: same run key → run %d again, nothing started; new firing in the job scope skipped %d/%d, processed 0; ledger and dedup rows unchanged",
		again.ID, skipped, f.records)
}

// externalRun is phases 3 and 4: demo.ledger-external with a kill -9.
func (c *cluster) externalRun(f form, policy string, sum *summary) {
	t := c.t
	params := fmt.Sprintf("records=%d;ms_per_record=%d;batch=%d;uncertain=%s", f.records, f.externalMS, batch, policy)
	job := c.createJob("external-"+policy, "demo.ledger-external", params)
	run, created := c.trigger(job, nil)
	require.True(t, created)
	runStart := time.Now()
	scope := "run:" + strconv.FormatInt(run.ID, 10)
	prefix := strconv.FormatInt(job, 10) + "|" + scope + "|"

	victim := c.waitCalling(job, run.ID, f.records, c.alive())
	require.NoError(t, victim.Kill())
	held := runningNow(victim, run.ID) // its output is complete: it was reaped
	require.NotEmpty(t, held, "%s was running no slot when it was killed", victim.Name)
	t.Logf("external/%s: kill -9 %s at +%s, running %d slots (tokens %v)",
		policy, victim.Name, time.Since(runStart).Round(time.Millisecond), len(held), tokens(held))
	c.WaitOnline(c.startExecutor())

	r, atts, retries := c.finishRun(run.ID)
	require.Equal(t, "succeeded", r.Status, "run %d: %s", run.ID, r.Error)
	took := time.Since(runStart)
	c.analyze()

	requireLost(t, atts, held, victim)
	byToken := map[int64]apitypes.Attempt{}
	victimTokens := map[int64]bool{}
	for _, a := range atts {
		byToken[a.Token] = a
		if harness.ExecutorOf(a) == victim.ID {
			victimTokens[a.Token] = true
		}
	}
	var reported int64
	for _, a := range harness.Current(atts) {
		require.Equal(t, "succeeded", a.Status)
		reported += a.Uncertain
	}
	st := c.dedupState(job, scope)
	requireAllKeys(t, st, f.records, "external/"+policy)
	calls := c.count("SELECT COUNT(*) FROM external_calls WHERE job_id = ?", job)
	calledKeys := c.count("SELECT COUNT(DISTINCT idempotency_key) FROM external_calls WHERE job_id = ?", job)
	require.Zero(t, c.count("SELECT COUNT(*) FROM external_calls WHERE job_id = ? AND idempotency_key NOT LIKE ?", job, []byte(prefix+"%")),
		"every call carries the record's idempotency key job|scope|key")
	dups := c.duplicateCalls(job)
	uncertainCalls := c.uncertainCallsBy(job)
	steals := c.reportSteals("external/"+policy, run.ID)
	// who describes the attempt of a token: the victim's, or its status.
	who := func(tok int64) string {
		if victimTokens[tok] {
			return "killed " + victim.Name
		}
		return byToken[tok].Status
	}
	currentTokens := map[int64]bool{}
	for _, a := range harness.Current(atts) {
		currentTokens[a.Token] = true
	}

	switch policy {
	case "retry":
		// At least once: every record done, every record called.
		require.Equal(t, map[string]int64{"done": f.records}, st.ByStatus, "DEFECT: external/retry: every record must end done")
		require.Equal(t, f.records, calledKeys, "DEFECT: external/retry: records never called (lost)")
		require.GreaterOrEqual(t, calls, f.records)
		// A repeat is the retry of an uncertain record: the first call
		// was made by a superseded attempt, every later one is flagged
		// uncertain, with attempt >= 2.
		firstBy := map[string]int{}
		for key, cs := range dups {
			first := cs[0]
			fa := byToken[first.Token]
			require.False(t, fa.Current && fa.Status == "succeeded",
				"DEFECT: %s was called %d times; its first call was made by token %d, which is a current succeeded attempt (%s)", key, len(cs), first.Token, fa)
			firstBy[who(first.Token)]++
			for _, k := range cs[1:] {
				require.True(t, k.Uncertain && k.Attempt >= 2 && k.Token > first.Token,
					"DEFECT: %s was called again (call %+v after %+v) without being handed out as uncertain", key, k, first)
			}
			var attempts int
			require.NoError(t, c.biz.QueryRow("SELECT attempts FROM dedup_record WHERE job_id = ? AND scope = ? AND record_key = ?",
				job, []byte(scope), []byte(strings.TrimPrefix(key, prefix))).Scan(&attempts))
			require.GreaterOrEqual(t, attempts, len(cs), "DEFECT: %s: %d calls but its dedup row counts %d hand-outs", key, len(cs), attempts)
		}
		// Each succeeded attempt made one uncertain call per uncertain
		// record it reported.
		for slot, a := range harness.Current(atts) {
			require.Equal(t, a.Uncertain, uncertainCalls[a.Token],
				"DEFECT: slot %d: token %d reported %d uncertain records and made %d calls flagged uncertain", slot, a.Token, a.Uncertain, uncertainCalls[a.Token])
		}
		require.Positive(t, reported, "the kill -9 must leave records uncertain (claimed, not marked done)")
		t.Logf("external/retry: run %d succeeded in %s (%d API retries): %d calls for %d records, %d keys called twice or more (first call by: %v), %d records reported uncertain and called again",
			run.ID, took.Round(time.Millisecond), retries, calls, f.records, len(dups), firstBy, reported)
		sum.add("external/retry: %d calls for %d records (at least once), %d keys repeated (first call by %v), every repeat a retry of the %d records reported uncertain; stealing: %s",
			calls, f.records, len(dups), firstBy, reported, steals)

	case "skip":
		require.Empty(t, dups, "DEFECT: external/skip: keys called more than once (at most once broken)")
		pending := c.keysOf(job, scope, "pending")
		require.Equal(t, map[string]int64{"done": f.records - int64(len(pending)), "pending": int64(len(pending))}, withoutZero(st.ByStatus),
			"external/skip: records are done or left pending (uncertain), nothing failed")
		require.NotEmpty(t, pending, "the kill -9 must leave records uncertain (claimed, not marked done)")
		leftBy := map[string]int{}
		for key, tok := range pending {
			a := byToken[tok]
			require.False(t, a.Current, "DEFECT: record %s is left pending by token %d, a current attempt (%s)", key, tok, harness.AttemptString(a))
			leftBy[who(tok)]++
		}
		callKey := c.db.idemKey("d.job_id", "d.scope", "d.record_key")
		require.Zero(t, c.count(`SELECT COUNT(*) FROM dedup_record d WHERE d.job_id = ? AND d.scope = ? AND d.status = 'done'
			AND (SELECT COUNT(*) FROM external_calls c WHERE c.idempotency_key = `+callKey+`) <> 1`, job, []byte(scope)),
			"DEFECT: external/skip: a done record was not called exactly once")
		pendingCalled := c.count(`SELECT COUNT(*) FROM dedup_record d WHERE d.job_id = ? AND d.scope = ? AND d.status = 'pending'
			AND EXISTS (SELECT 1 FROM external_calls c WHERE c.idempotency_key = `+callKey+`)`, job, []byte(scope))
		require.Equal(t, int64(len(pending)), reported,
			"DEFECT: external/skip: the attempts report %d uncertain records, %d are left pending", reported, len(pending))
		// The alarms in the executors' logs add up too, and list the keys.
		var alarmed int64
		listed := map[string]bool{}
		for _, e := range c.Execs() {
			for _, l := range logLines(e.Process, "records: uncertain records left pending, not processed again: their effect may or may not have happened; check them") {
				if l.Int("run_id") == run.ID && l["alarm"] == "true" && currentTokens[l.Int("token")] {
					alarmed += l.Int("count")
				}
			}
			for _, l := range logLines(e.Process, "ledger slot done") {
				if l.Int("run_id") == run.ID && l["uncertain_keys"] != "" && currentTokens[l.Int("token")] {
					for _, k := range strings.Split(l["uncertain_keys"], ",") {
						listed[k] = true
					}
				}
			}
		}
		require.Equal(t, int64(len(pending)), alarmed, "DEFECT: external/skip: alarm log lines count %d uncertain records, %d are pending", alarmed, len(pending))
		require.Equal(t, sortedKeys(pending), sortedKeys(listed), "the slots list the keys they left uncertain")
		t.Logf("external/skip: run %d succeeded in %s (%d API retries): %d calls for %d records, no key called twice; %d records left uncertain (pending; by: %v) and reported (attempts' uncertain counters, alarms, keys listed): %d of them had been called, %d not (not done: at most once)",
			run.ID, took.Round(time.Millisecond), retries, calls, f.records, len(pending), leftBy, pendingCalled, int64(len(pending))-pendingCalled)
		require.Equal(t, len(pending), leftBy["killed "+victim.Name],
			"DEFECT: external/skip run %d: records left uncertain, never to be applied, by attempts that did not crash (%v)", run.ID, leftBy)
		sum.add("external/skip: %d calls for %d records, 0 repeated; %d uncertain reported = %d pending (by %v; %d called, %d not); stealing: %s",
			calls, f.records, reported, len(pending), leftBy, pendingCalled, int64(len(pending))-pendingCalled, steals)
	}
}

func withoutZero(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// waitBooking waits until one of candidates is running a slot of the run
// that has booked some of its records but not half of them (so that a
// kill or a freeze lands in the middle of it), and returns it.
func (c *cluster) waitBooking(job, runID, records int64, candidates []*harness.Executor) *harness.Executor {
	return c.waitBusy(runID, records, candidates, "booking ledger rows", func(toks []int64) (map[int64]int64, error) {
		return c.perToken("SELECT token, COUNT(*) FROM ledger WHERE job_id = ? AND token IN (%s) GROUP BY token", job, toks)
	})
}

// waitCalling waits until one of candidates is running a slot of the run
// that has made some of its external calls but not half of them, and
// holds records pending.
func (c *cluster) waitCalling(job, runID, records int64, candidates []*harness.Executor) *harness.Executor {
	return c.waitBusy(runID, records, candidates, "calling", func(toks []int64) (map[int64]int64, error) {
		pending, err := c.perToken("SELECT token, COUNT(*) FROM dedup_record WHERE job_id = ? AND status = 'pending' AND token IN (%s) GROUP BY token", job, toks)
		if err != nil {
			return nil, err
		}
		calls, err := c.perToken("SELECT token, COUNT(*) FROM external_calls WHERE job_id = ? AND token IN (%s) GROUP BY token", job, toks)
		for tok := range calls {
			if pending[tok] == 0 {
				delete(calls, tok)
			}
		}
		return calls, err
	})
}

// perToken runs a "token, COUNT(*)" query (with %s for the token list).
func (c *cluster) perToken(query string, job int64, toks []int64) (map[int64]int64, error) {
	list, args := inList(toks)
	rows, err := c.biz.Query(fmt.Sprintf(query, list), append([]any{job}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var tok, n int64
		if err := rows.Scan(&tok, &n); err != nil {
			return nil, err
		}
		out[tok] = n
	}
	return out, rows.Err()
}

// waitBusy waits until one of candidates is running (by its own log:
// started and not finished) a slot of the run for which done, the count
// of records it has done so far per token, is positive and below half the
// slot's size, and returns it.
func (c *cluster) waitBusy(runID, records int64, candidates []*harness.Executor, what string, done func(toks []int64) (map[int64]int64, error)) *harness.Executor {
	c.t.Helper()
	ranges := newSlotRanges(records)
	var victim *harness.Executor
	var seen []string // what the last poll saw, for the failure message
	testenv.WaitFor(c.t, waitDeadline, func() (bool, error) {
		r, _, err := c.Run(runID)
		if err != nil {
			return false, err
		}
		if harness.Terminal[r.Status] {
			c.t.Fatalf("run %d ended (%s) before an executor was found %s half-way through a slot: make the run longer (ms_per_record); last seen: %v", runID, r.Status, what, seen)
		}
		seen = seen[:0]
		for _, e := range candidates {
			run := runningNow(e, runID)
			if len(run) == 0 {
				continue
			}
			n, err := done(tokens(run))
			if err != nil {
				seen = append(seen, e.Name+": "+err.Error())
				return false, err
			}
			for _, a := range run {
				d := n[a.Token]
				seen = append(seen, fmt.Sprintf("%s token %d slot %d: %d of %d", e.Name, a.Token, a.Slot, d, ranges.size(a.Slot)))
				if d > 0 && 2*d < ranges.size(a.Slot) {
					victim = e
					return true, nil
				}
			}
		}
		return false, fmt.Errorf("no executor is %s half-way through a slot yet: %v", what, seen)
	}, "no executor ran slots of the run")
	return victim
}

// runningNow returns the slots of the run that e has started and not
// finished, by its log ("slot started", "slot finished"), as attempts with
// token and slot.
func runningNow(e *harness.Executor, runID int64) []apitypes.Attempt {
	lines := parseLines(e.Output(), "run_id="+strconv.FormatInt(runID, 10)+" ", "slot started", "slot finished")
	finished := map[int64]bool{}
	for _, l := range lines["slot finished"] {
		finished[l.Int("token")] = true
	}
	var out []apitypes.Attempt
	for _, l := range lines["slot started"] {
		if tok := l.Int("token"); !finished[tok] {
			out = append(out, apitypes.Attempt{Token: tok, Slot: int(l.Int("slot")), Status: "running"})
		}
	}
	return out
}

// requireLost asserts that the slots an executor was running when it was
// killed were superseded as lost.
func requireLost(t *testing.T, atts, held []apitypes.Attempt, e *harness.Executor) {
	t.Helper()
	status := map[int64]string{}
	for _, a := range atts {
		status[a.Token] = a.Status
	}
	for _, h := range held {
		require.Equal(t, "lost", status[h.Token], "DEFECT: token %d was running slot %d on %s when it was killed: it must be superseded as lost", h.Token, h.Slot, e.Name)
	}
}

func containsToken(atts []apitypes.Attempt, tok int64) bool {
	for _, a := range atts {
		if a.Token == tok {
			return true
		}
	}
	return false
}
