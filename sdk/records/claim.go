package records

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// claimed is a record this attempt owns after a claim: its dedup row has
// this attempt's token.
type claimed struct {
	key       string
	attempt   int  // the row's attempts after the claim
	uncertain bool // taken over from an attempt that could not finish it
	inserted  bool // created by the claim (else an existing row taken over, now pending)
}

// claimResult is what a claim decided for each key of a batch.
type claimResult struct {
	todo             []claimed // to hand to the handler, in key order
	skipped          int64     // done, or pending under a live attempt, or in flight in this call
	exhausted        []string  // failed MaxRecordAttempts times: left failed
	uncertainRetried int64     // uncertain, taken over (policy Retry)
	uncertainLeft    []string  // uncertain, left pending (policy Skip, or attempts exhausted)
}

type dedupRow struct {
	status   string
	attempts int
	token    int64
}

// errAmbiguousClaim: the fast claim found pending rows of this very token
// that it cannot tell from the rows it just inserted. The transaction is
// rolled back and the batch claimed again the exact way.
var errAmbiguousClaim = fmt.Errorf("%w: rows of this token left by an earlier call; claiming again the exact way", errConflict)

// claim claims keys (sorted, distinct, valid) inside tx, whose fencing check
// has passed and returned now. New rows get status insertStatus (pending in
// External mode; done in Transactional mode, where the row is invisible
// until the effect commits with it).
//
// The fast way, used first: one multi-row INSERT IGNORE. When it inserted
// every key — the normal case for fresh records — that is all. Otherwise the
// rows are read back, locked, and the rows inserted just now are the rows of
// this token with status insertStatus and attempts 1: exactly as many as the
// insert reported, unless an earlier Process call of this same attempt left
// such rows; then the claim is run again the exact way (*exact is set): read
// the rows first (locked), insert only the missing keys, and read back only
// those when the insert did not create them all (a concurrent claimer was
// faster).
//
// Existing rows are then decided (see decide) and the ones to process taken
// over with a compare-and-set update; a lost compare-and-set rolls the
// transaction back for a retry (errConflict).
func (r *run) claim(ctx context.Context, tx *sql.Tx, keys []string, now int64, insertStatus string, exact *bool) (claimResult, error) {
	if o := r.p.cfg.Observer; o != nil {
		defer func(start time.Time) { o.ObserveDedupBatch(len(keys), time.Since(start)) }(time.Now())
	}
	var res claimResult
	inserted := make(map[string]bool, len(keys))
	var existing map[string]dedupRow
	if !*exact {
		n, err := r.insertRows(ctx, tx, keys, insertStatus, now)
		if err != nil {
			return res, err
		}
		if n == int64(len(keys)) {
			res.todo = make([]claimed, len(keys))
			for i, k := range keys {
				res.todo[i] = claimed{key: k, attempt: 1, inserted: true}
			}
			return res, nil
		}
		rows, err := r.readRows(ctx, tx, keys)
		if err != nil {
			return res, err
		}
		var mine int64
		for k, row := range rows {
			if row.token == r.task.Token && row.status == insertStatus && row.attempts == 1 {
				mine++
				inserted[k] = true
			}
		}
		if mine != n {
			*exact = true
			return res, errAmbiguousClaim
		}
		existing = rows
	} else {
		rows, err := r.readRows(ctx, tx, keys)
		if err != nil {
			return res, err
		}
		var missing []string
		for _, k := range keys {
			if _, ok := rows[k]; !ok {
				missing = append(missing, k)
			}
		}
		n, err := r.insertRows(ctx, tx, missing, insertStatus, now)
		if err != nil {
			return res, err
		}
		if n == int64(len(missing)) {
			for _, k := range missing {
				inserted[k] = true
			}
		} else {
			back, err := r.readRows(ctx, tx, missing)
			if err != nil {
				return res, err
			}
			for k, row := range back {
				if row.token == r.task.Token {
					inserted[k] = true // absent a moment ago: ours
				} else {
					rows[k] = row // a concurrent claimer's
				}
			}
		}
		existing = rows
	}
	return r.decide(ctx, tx, keys, inserted, existing, now)
}

// decide handles the rows of a batch that existed before the claim:
//
//	done                                    skipped
//	pending, token of this call, in flight  skipped (the Source repeated the key)
//	failed, attempts < max                  taken over: retried
//	failed, attempts >= max                 exhausted: left failed
//	pending, token holding a live lock      skipped: another attempt (an overlapping run) is on it
//	pending, otherwise                      uncertain: taken over (Retry, attempts < max) or left (Skip)
//
// "A live lock" is a shard_lock row of the job with that token, not
// released, lease not expired. A pending row of this very token that is not
// in flight was left by an earlier Process call of this attempt that ended
// between the effect and its mark: uncertain too.
func (r *run) decide(ctx context.Context, tx *sql.Tx, keys []string, inserted map[string]bool, existing map[string]dedupRow, now int64) (claimResult, error) {
	var res claimResult
	me := r.task.Token
	maxAttempts := r.maxAttempts

	// Which tokens of foreign pending rows may still finish them?
	var foreign []int64
	for k, row := range existing {
		if !inserted[k] && row.status == statusPending && row.token != me && !slices.Contains(foreign, row.token) {
			foreign = append(foreign, row.token)
		}
	}
	live, err := r.liveTokens(ctx, tx, now, foreign)
	if err != nil {
		return res, err
	}

	type group struct {
		status   string
		token    int64
		attempts int
	}
	takes := map[group][]string{}
	var order []group
	take := func(k string, row dedupRow) {
		g := group{row.status, row.token, row.attempts}
		if _, ok := takes[g]; !ok {
			order = append(order, g)
		}
		takes[g] = append(takes[g], k)
	}
	uncertain := map[string]bool{}

	r.mu.Lock()
	for _, k := range keys {
		if inserted[k] {
			continue
		}
		row, ok := existing[k]
		if !ok {
			r.mu.Unlock()
			return res, fmt.Errorf("%w: the dedup row of %q vanished during the claim", errConflict, k)
		}
		switch {
		case row.status == statusDone:
			res.skipped++
		case row.token == me && r.inflight[k]:
			res.skipped++
		case row.status == statusFailed:
			if row.attempts < maxAttempts {
				take(k, row)
			} else {
				res.exhausted = append(res.exhausted, k)
			}
		case row.status == statusPending && row.token != me && live[row.token]:
			res.skipped++
		case row.status == statusPending:
			if r.uncertainPolicy == Retry && row.attempts < maxAttempts {
				take(k, row)
				uncertain[k] = true
				res.uncertainRetried++
			} else {
				res.uncertainLeft = append(res.uncertainLeft, k)
			}
		default:
			r.mu.Unlock()
			return res, fmt.Errorf("records: dedup_record of %q has status %q: expected pending, done or failed", k, row.status)
		}
	}
	r.mu.Unlock()

	for _, g := range order {
		ks := takes[g]
		args := make([]any, 0, 8+len(ks))
		args = append(args, me, r.task.RunID, now, r.task.JobID, r.scopeArg, g.status, g.token, g.attempts)
		for _, k := range ks {
			args = append(args, r.keyArg(k))
		}
		n, err := execN(ctx, tx, r.p.q.expand(qDedupTake, len(ks)), args...)
		if err != nil {
			return res, fmt.Errorf("records: take over dedup rows: %w", err)
		}
		if n != int64(len(ks)) {
			return res, fmt.Errorf("%w: took over %d of %d rows", errConflict, n, len(ks))
		}
	}

	attempts := make(map[string]int, len(existing))
	for _, g := range order {
		for _, k := range takes[g] {
			attempts[k] = g.attempts + 1
		}
	}
	for _, k := range keys {
		switch {
		case inserted[k]:
			res.todo = append(res.todo, claimed{key: k, attempt: 1, inserted: true})
		case attempts[k] > 0:
			res.todo = append(res.todo, claimed{key: k, attempt: attempts[k], uncertain: uncertain[k]})
		}
	}
	return res, nil
}

// insertRows inserts a dedup row for each key, ignoring keys that have one,
// and returns how many it inserted.
func (r *run) insertRows(ctx context.Context, tx *sql.Tx, keys []string, status string, now int64) (int64, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	t := r.task
	// keys are sorted (prepare): the insert walks the primary key forwards
	// instead of jumping between pages, and concurrent claimers lock rows
	// in one order.
	var args []any
	if r.p.cfg.Dialect != DialectSQLite { // one JSON array of the keys in hex
		args = []any{t.JobID, r.scopeArg, status, t.Token, t.RunID, now, now, hexJSON(keys)}
	} else {
		args = make([]any, 0, 8*len(keys))
		for _, k := range keys {
			args = append(args, t.JobID, r.scopeArg, r.keyArg(k), status, t.Token, t.RunID, now, now)
		}
	}
	n, err := execN(ctx, tx, r.p.q.expand(qDedupInsert, len(keys)), args...)
	if err != nil {
		return 0, fmt.Errorf("records: claim: insert dedup rows: %w", err)
	}
	return n, nil
}

// readRows reads the dedup rows of keys, locked (FOR UPDATE on MySQL and
// PostgreSQL).
func (r *run) readRows(ctx context.Context, tx *sql.Tx, keys []string) (map[string]dedupRow, error) {
	out := make(map[string]dedupRow, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	args := make([]any, 0, 2+len(keys))
	args = append(args, r.task.JobID, r.scopeArg)
	for _, k := range keys {
		args = append(args, r.keyArg(k))
	}
	rows, err := tx.QueryContext(ctx, r.p.q.expand(qDedupRead, len(keys)), args...)
	if err != nil {
		return nil, fmt.Errorf("records: claim: read dedup rows: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var row dedupRow
		if err := rows.Scan(&k, &row.status, &row.attempts, &row.token); err != nil {
			return nil, fmt.Errorf("records: claim: read dedup rows: %w", err)
		}
		row.status = strings.TrimRight(row.status, " ") // CHAR(7) comes back padded under sql_mode PAD_CHAR_TO_FULL_LENGTH
		out[k] = row
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("records: claim: read dedup rows: %w", err)
	}
	return out, nil
}

// liveTokens returns which of tokens hold a live shard lock of the job.
func (r *run) liveTokens(ctx context.Context, tx *sql.Tx, now int64, tokens []int64) (map[int64]bool, error) {
	live := map[int64]bool{}
	if len(tokens) == 0 {
		return live, nil
	}
	args := make([]any, 0, 2+len(tokens))
	args = append(args, r.task.JobID, now)
	for _, t := range tokens {
		args = append(args, t)
	}
	rows, err := tx.QueryContext(ctx, r.p.q.expand(qLockLive, len(tokens)), args...)
	if err != nil {
		return nil, fmt.Errorf("records: claim: read live locks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t int64
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("records: claim: read live locks: %w", err)
		}
		live[t] = true
	}
	return live, rows.Err()
}

// execN runs a statement and returns the number of rows it affected.
func execN(ctx context.Context, tx *sql.Tx, query string, args ...any) (int64, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// hexJSON returns keys as a JSON array of hex strings: ["6b31","6b32"].
func hexJSON(keys []string) string {
	n := 2
	for _, k := range keys {
		n += 2*len(k) + 3
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = hex.AppendEncode(b, []byte(k))
		b = append(b, '"')
	}
	b = append(b, ']')
	return string(b)
}
