package chaos

import (
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
	"github.com/shardjob/shardjob/sdk"
)

// Row counts and checks on the business database. Keys are the decimal ids
// 1..R; dedup_record.scope is "job" (demo.ledger here) or "run:<id>".

// analyze refreshes the planner's statistics of the business tables, after
// a run and before the checks that join them.
func (c *cluster) analyze() {
	c.t.Helper()
	if q := c.db.analyze(); q != "" {
		_, err := c.biz.Exec(q)
		require.NoError(c.t, err, q)
	}
}

func (c *cluster) count(query string, args ...any) int64 {
	c.t.Helper()
	var n sql.NullInt64
	require.NoError(c.t, c.biz.QueryRow(query, args...).Scan(&n), query)
	return n.Int64
}

// inList returns "?, ?, …" and the arguments for an IN list of tokens.
func inList(toks []int64) (string, []any) {
	if len(toks) == 0 {
		return "NULL", nil
	}
	args := make([]any, len(toks))
	for i, t := range toks {
		args[i] = t
	}
	return strings.TrimSuffix(strings.Repeat("?, ", len(toks)), ", "), args
}

// ledgerRowsBy counts the ledger rows written by each of toks.
func (c *cluster) ledgerRowsBy(jobID int64, toks []int64) map[int64]int64 {
	c.t.Helper()
	list, args := inList(toks)
	rows, err := c.biz.Query("SELECT token, COUNT(*) FROM ledger WHERE job_id = ? AND token IN ("+list+") GROUP BY token",
		append([]any{jobID}, args...)...)
	require.NoError(c.t, err)
	defer rows.Close()
	out := map[int64]int64{}
	for _, t := range toks {
		out[t] = 0
	}
	for rows.Next() {
		var tok, n int64
		require.NoError(c.t, rows.Scan(&tok, &n))
		out[tok] = n
	}
	require.NoError(c.t, rows.Err())
	return out
}

// shardLock is a row of shard_lock: the largest token that took the lock
// of a slot, and whether it released it.
type shardLock struct {
	Token    int64
	Released bool
}

// lockTokens returns the shard lock of each slot of a run (absent: no lock
// row yet).
func (c *cluster) lockTokens(jobID, runID int64) (map[int]shardLock, error) {
	rows, err := c.biz.Query("SELECT slot, token, released_at IS NOT NULL FROM shard_lock WHERE job_id = ? AND run_id = ?", jobID, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int]shardLock{}
	for rows.Next() {
		var slot int
		var l shardLock
		if err := rows.Scan(&slot, &l.Token, &l.Released); err != nil {
			return nil, err
		}
		out[slot] = l
	}
	return out, rows.Err()
}

// dedupState summarises the dedup rows of a (job, scope): rows per status,
// and checksums that change when any row is inserted, deleted or updated.
type dedupState struct {
	ByStatus                              map[string]int64
	MinKey, MaxKey, KeySum                int64
	TokenSum, AttemptsSum, UpdatedAtSum   int64
	LedgerRows, LedgerAmount, LedgerIDSum int64
}

func (c *cluster) dedupState(jobID int64, scope string) dedupState {
	c.t.Helper()
	s := dedupState{ByStatus: map[string]int64{}}
	rows, err := c.biz.Query("SELECT status, COUNT(*) FROM dedup_record WHERE job_id = ? AND scope = ? GROUP BY status", jobID, []byte(scope))
	require.NoError(c.t, err)
	for rows.Next() {
		var st string
		var n int64
		require.NoError(c.t, rows.Scan(&st, &n))
		s.ByStatus[st] = n
	}
	require.NoError(c.t, rows.Err())
	rows.Close()
	var minKey, maxKey, keySum, tokSum, attSum, updSum sql.NullInt64
	key := c.db.number("record_key")
	require.NoError(c.t, c.biz.QueryRow(`SELECT MIN(`+key+`), MAX(`+key+`), SUM(`+key+`), SUM(token), SUM(attempts), SUM(updated_at)
		FROM dedup_record WHERE job_id = ? AND scope = ?`, jobID, []byte(scope)).Scan(&minKey, &maxKey, &keySum, &tokSum, &attSum, &updSum))
	s.MinKey, s.MaxKey, s.KeySum = minKey.Int64, maxKey.Int64, keySum.Int64
	s.TokenSum, s.AttemptsSum, s.UpdatedAtSum = tokSum.Int64, attSum.Int64, updSum.Int64
	var n, amount, idSum sql.NullInt64
	require.NoError(c.t, c.biz.QueryRow("SELECT COUNT(*), SUM(amount), SUM(id) FROM ledger WHERE job_id = ?", jobID).Scan(&n, &amount, &idSum))
	s.LedgerRows, s.LedgerAmount, s.LedgerIDSum = n.Int64, amount.Int64, idSum.Int64
	return s
}

// requireAllKeys asserts that the dedup rows of the scope are exactly the
// keys 1..records (the primary key makes them distinct).
func requireAllKeys(t *testing.T, s dedupState, records int64, what string) {
	t.Helper()
	var total int64
	for _, n := range s.ByStatus {
		total += n
	}
	require.Equal(t, records, total, "DEFECT: %s: dedup rows %v for %d records", what, s.ByStatus, records)
	require.Equal(t, [3]int64{1, records, records * (records + 1) / 2}, [3]int64{s.MinKey, s.MaxKey, s.KeySum},
		"DEFECT: %s: the dedup keys are not exactly 1..%d (min, max, sum)", what, records)
}

// slotOf maps a record id to its slot (sdk.IDRange over 1..records).
type slotRanges [][2]int64

func newSlotRanges(records int64) slotRanges {
	r := make(slotRanges, slots)
	for s := range slots {
		lo, hi := sdk.IDRange(s, slots, 1, records)
		r[s] = [2]int64{lo, hi}
	}
	return r
}

func (r slotRanges) size(slot int) int64 {
	if r[slot][0] > r[slot][1] {
		return 0
	}
	return r[slot][1] - r[slot][0] + 1
}

// tokenRows is what one token wrote in one slot of the ledger.
type tokenRows struct {
	Slot           int
	Token          int64
	Rows           int64
	First, Last    time.Time // created_at, database clock
	MinKey, MaxKey int64
}

// ledgerByToken returns the ledger rows of a job grouped by slot and token,
// ordered by slot then token.
func (c *cluster) ledgerByToken(jobID int64) []tokenRows {
	c.t.Helper()
	key := c.db.number("source_key")
	rows, err := c.biz.Query(`SELECT slot, token, COUNT(*), MIN(created_at), MAX(created_at), MIN(`+key+`), MAX(`+key+`)
		FROM ledger WHERE job_id = ? GROUP BY slot, token ORDER BY slot, token`, jobID)
	require.NoError(c.t, err)
	defer rows.Close()
	var out []tokenRows
	for rows.Next() {
		var r tokenRows
		require.NoError(c.t, rows.Scan(&r.Slot, &r.Token, &r.Rows, &r.First, &r.Last, &r.MinKey, &r.MaxKey))
		out = append(out, r)
	}
	require.NoError(c.t, rows.Err())
	return out
}

// ledgerReport is what checkLedger found, for the summary.
type ledgerReport struct {
	RowsByStatus map[string]int64 // ledger rows by the status of the attempt whose token wrote them
	Tokens       int              // tokens that wrote rows
	SlotsShared  int              // slots whose rows were written by more than one token
}

// checkLedger asserts exactly-once for the demo.ledger run: one done dedup
// row and one ledger row per record, written together by one token of the
// slot owning the record; per slot, no row of an older token written after
// the first row of a newer one; and each succeeded current attempt's
// processed counter equal to the rows its token wrote.
func (c *cluster) checkLedger(jobID int64, records int64, atts []apitypes.Attempt) ledgerReport {
	t := c.t
	t.Helper()
	c.analyze()
	s := c.dedupState(jobID, "job")
	requireAllKeys(t, s, records, "demo.ledger")
	require.Equal(t, map[string]int64{"done": records}, s.ByStatus, "DEFECT: demo.ledger: every record must be done")

	var n, distinct, amount, minKey, maxKey, badKey sql.NullInt64
	key := c.db.number("source_key")
	require.NoError(t, c.biz.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT source_key), SUM(amount), MIN(`+key+`), MAX(`+key+`),
		COUNT(CASE WHEN record_key <> `+c.db.idemKey("job_id", "'job'", "source_key")+` THEN 1 END)
		FROM ledger WHERE job_id = ?`, jobID).Scan(&n, &distinct, &amount, &minKey, &maxKey, &badKey))
	require.Equal(t, records, n.Int64, "DEFECT: ledger rows (one per record)")
	require.Equal(t, records, distinct.Int64, "DEFECT: distinct records in the ledger")
	require.Equal(t, records*(records+1)/2, amount.Int64, "DEFECT: SUM(amount): every id 1..%d booked once", records)
	require.Equal(t, [2]int64{1, records}, [2]int64{minKey.Int64, maxKey.Int64})
	require.Zero(t, badKey.Int64, "ledger.record_key is the record's idempotency key")

	joined := c.count(`SELECT COUNT(*) FROM ledger l JOIN dedup_record d
		ON d.job_id = l.job_id AND d.scope = 'job' AND d.record_key = l.source_key
		WHERE l.job_id = ? AND d.status = 'done' AND d.token = l.token`, jobID)
	require.Equal(t, records, joined, "DEFECT: every ledger row is written by the token of its record's done row (same transaction)")

	byToken := map[int64]apitypes.Attempt{}
	for _, a := range atts {
		byToken[a.Token] = a
	}
	ranges := newSlotRanges(records)
	rep := ledgerReport{RowsByStatus: map[string]int64{}}
	groups := c.ledgerByToken(jobID)
	rep.Tokens = len(groups)
	rowsOfToken := map[int64]int64{}
	var late []string
	for i, g := range groups {
		a, ok := byToken[g.Token]
		require.True(t, ok, "DEFECT: token %d wrote %d ledger rows of slot %d but is no attempt of the run", g.Token, g.Rows, g.Slot)
		require.Equal(t, a.Slot, g.Slot, "DEFECT: token %d is an attempt of slot %d, it wrote rows of slot %d", g.Token, a.Slot, g.Slot)
		require.True(t, g.MinKey >= ranges[g.Slot][0] && g.MaxKey <= ranges[g.Slot][1],
			"DEFECT: token %d of slot %d wrote records %d..%d outside the slot's %v", g.Token, g.Slot, g.MinKey, g.MaxKey, ranges[g.Slot])
		rowsOfToken[g.Token] = g.Rows
		status := a.Status
		if a.Current {
			status = "current " + status
		}
		rep.RowsByStatus[status] += g.Rows
		if i > 0 && groups[i-1].Slot == g.Slot {
			prev := groups[i-1]
			if i == 1 || groups[i-2].Slot != g.Slot {
				rep.SlotsShared++
			}
			// The newer token took the lock (an exclusive lock, after the
			// older token's transactions committed) before it wrote: every
			// row of the older token is older than every row of the newer.
			if prev.Last.After(g.First) {
				late = append(late, fmt.Sprintf("slot %d: token %d (%s) wrote a row at %s, after token %d (%s) wrote its first at %s",
					g.Slot, prev.Token, byToken[prev.Token].Status, prev.Last.Format("15:04:05.000000"),
					g.Token, byToken[g.Token].Status, g.First.Format("15:04:05.000000")))
			}
		}
	}
	require.Empty(t, late, "DEFECT: rows written by fenced tokens after a newer token took over:\n%s", strings.Join(late, "\n"))

	for slot, a := range harness.Current(atts) {
		require.Equal(t, "succeeded", a.Status, "slot %d: %s", slot, harness.AttemptString(a))
		require.Equal(t, rowsOfToken[a.Token], a.Processed,
			"DEFECT: slot %d: the succeeded attempt reports %d records processed, its token wrote %d ledger rows", slot, a.Processed, rowsOfToken[a.Token])
		require.Equal(t, ranges.size(slot), a.Processed+a.Skipped,
			"DEFECT: slot %d: the succeeded attempt read %d records (processed+skipped), the slot has %d: %s", slot, a.Processed+a.Skipped, ranges.size(slot), harness.AttemptString(a))
	}
	return rep
}

// call is one row of external_calls.
type call struct {
	ID        int64
	Key       string
	Token     int64
	Attempt   int
	Uncertain bool
}

// duplicateCalls returns, by key, the calls of the keys of a job called
// more than once, in call order.
func (c *cluster) duplicateCalls(jobID int64) map[string][]call {
	c.t.Helper()
	rows, err := c.biz.Query(`SELECT c.id, c.idempotency_key, c.token, c.attempt, c.uncertain FROM external_calls c
		JOIN (SELECT idempotency_key FROM external_calls WHERE job_id = ? GROUP BY idempotency_key HAVING COUNT(*) > 1) d
		ON d.idempotency_key = c.idempotency_key
		ORDER BY c.id`, jobID)
	require.NoError(c.t, err)
	defer rows.Close()
	out := map[string][]call{}
	for rows.Next() {
		var k call
		var key []byte
		require.NoError(c.t, rows.Scan(&k.ID, &key, &k.Token, &k.Attempt, &k.Uncertain))
		k.Key = string(key)
		out[k.Key] = append(out[k.Key], k)
	}
	require.NoError(c.t, rows.Err())
	return out
}

// uncertainCallsBy counts the calls flagged uncertain per token of a job.
func (c *cluster) uncertainCallsBy(jobID int64) map[int64]int64 {
	c.t.Helper()
	rows, err := c.biz.Query("SELECT token, COUNT(*) FROM external_calls WHERE job_id = ? AND uncertain GROUP BY token", jobID)
	require.NoError(c.t, err)
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var tok, n int64
		require.NoError(c.t, rows.Scan(&tok, &n))
		out[tok] = n
	}
	require.NoError(c.t, rows.Err())
	return out
}

// keysOf returns the record keys of a scope with a status.
func (c *cluster) keysOf(jobID int64, scope, status string) map[string]int64 {
	c.t.Helper()
	rows, err := c.biz.Query("SELECT record_key, token FROM dedup_record WHERE job_id = ? AND scope = ? AND status = ?", jobID, []byte(scope), status)
	require.NoError(c.t, err)
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k []byte
		var tok int64
		require.NoError(c.t, rows.Scan(&k, &tok))
		out[string(k)] = tok
	}
	require.NoError(c.t, rows.Err())
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := strconv.ParseInt(out[i], 10, 64)
		b, _ := strconv.ParseInt(out[j], 10, 64)
		return a < b
	})
	return out
}
