package records

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/sdk"
)

// The records policy of the job's definition (sdk.Task.Records) wins over
// the Processor's Config; what the job leaves empty, the Config decides.
func TestJobPolicyOverridesConfig(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		p := e.processor(t, Config{Mode: External, Uncertain: Retry, MaxRecordAttempts: 3})
		noop := func(context.Context, Record) error { return nil }
		task := func(job, run, token int64, pol sdk.RecordsPolicy) *sdk.Task {
			tk := newTask(job, run, 0, token)
			tk.Records = pol
			return tk
		}
		process := func(tk *sdk.Task, fn Func, ks ...string) Result {
			t.Helper()
			res, err := p.Process(ctx, tk, KeysOf(ks), fn)
			require.NoError(t, err)
			return res
		}

		// Scope "job": a second run skips what the first did, although the
		// Config's scope is per run.
		require.Equal(t, int64(2), process(task(1, 10, 1, sdk.RecordsPolicy{Scope: "job"}), noop, "a", "b").Processed)
		require.Equal(t, int64(2), process(task(1, 11, 2, sdk.RecordsPolicy{Scope: "job"}), noop, "a", "b").Skipped)
		require.Equal(t, map[string]int{"done": 2}, e.statuses(t, 1, "job"))
		require.Equal(t, int64(2), process(task(1, 12, 3, sdk.RecordsPolicy{}), noop, "a", "b").Processed,
			"no job policy: the Config's per-run scope")

		// A named scope (resolved by the admin) and "run" over WithScope.
		require.Equal(t, int64(1), process(task(2, 20, 4, sdk.RecordsPolicy{Scope: "settle:2026-11-30"}), noop, "a").Processed)
		require.Equal(t, map[string]int{"done": 1}, e.statuses(t, 2, "settle:2026-11-30"))
		var logs testenv.Buffer
		named := e.processor(t, Config{Mode: External, Uncertain: Retry, Logger: debugLogger(&logs)}).WithScope("date:x")
		_, err := named.Process(ctx, task(3, 30, 5, sdk.RecordsPolicy{Scope: "run"}), KeysOf([]string{"a"}), noop)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"done": 1}, e.statuses(t, 3, "run:30"), "the job's \"run\" wins over WithScope")
		require.Contains(t, logs.String(), "replaces the scope this handler chose")
		require.Contains(t, logs.String(), "handler_scope=date:x")
		require.Equal(t, 1, strings.Count(logs.String(), "replaces the scope"), "once per Process call")

		// MaxAttempts 1: a failed record is not retried, although the
		// Config allows 3.
		fail := func(context.Context, Record) error { return errors.New("declined") }
		require.Equal(t, int64(1), process(task(4, 40, 6, sdk.RecordsPolicy{MaxAttempts: 1}), fail, "bad").Failed)
		res := process(task(4, 40, 7, sdk.RecordsPolicy{MaxAttempts: 1}), noop, "bad")
		require.Equal(t, int64(1), res.Exhausted)
		require.Zero(t, res.Processed)
		require.Equal(t, int64(1), process(task(4, 40, 8, sdk.RecordsPolicy{}), noop, "bad").Processed,
			"without the job's limit the Config's 3 attempts apply")

		// Uncertain "skip": a record left pending by a dead attempt is
		// skipped and reported, although the Config says Retry.
		for _, key := range []string{"u1", "u2"} {
			_, err := e.db.Exec("INSERT INTO dedup_record (job_id, scope, record_key, status, attempts, token, run_id, error, created_at, updated_at) VALUES (?, ?, ?, 'pending', 1, 1, 50, '', 0, 0)",
				5, scopeArg(e, "run:50"), keyArg(e, key))
			require.NoError(t, err)
		}
		res = process(task(5, 50, 9, sdk.RecordsPolicy{Uncertain: "skip"}), noop, "u1")
		require.Equal(t, int64(1), res.Uncertain)
		require.Zero(t, res.Processed)
		res = process(task(5, 50, 10, sdk.RecordsPolicy{}), noop, "u2")
		require.Equal(t, int64(1), res.Processed, "the Config's Retry takes the other over")

		// A policy the SDK does not know is an error, not a silent default.
		for _, bad := range []sdk.RecordsPolicy{{Uncertain: "maybe"}, {MaxAttempts: -1}, {Scope: "run:7"}} {
			_, err := p.Process(ctx, task(6, 60, 11, bad), KeysOf([]string{"a"}), noop)
			require.Error(t, err, "%+v", bad)
			require.Contains(t, err.Error(), "the job's", "%+v", bad)
		}
	})
}

// scopeArg and keyArg are a scope and a key as the dialect's columns take
// them (VARBINARY on MySQL, BYTEA on PostgreSQL).
func scopeArg(e *env, s string) any { return e.arg(s) }

func keyArg(e *env, k string) any { return scopeArg(e, k) }

// dedup_record.status is CHAR(7); a server with sql_mode
// PAD_CHAR_TO_FULL_LENGTH returns "done   ". Claims and the archive still
// recognise it.
func TestPaddedCharStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t, DialectMySQL, "sql_mode", "'STRICT_TRANS_TABLES,PAD_CHAR_TO_FULL_LENGTH'")
	ctx := context.Background()
	p := e.processor(t, Config{Mode: External, Uncertain: Retry})
	noop := func(context.Context, Record) error { return nil }
	res, err := p.Process(ctx, newTask(1, 1, 0, 1), KeysOf([]string{"a", "b"}), noop)
	require.NoError(t, err)
	require.Equal(t, int64(2), res.Processed)
	var padded string
	require.NoError(t, e.db.QueryRow("SELECT status FROM dedup_record WHERE job_id = 1 LIMIT 1").Scan(&padded))
	require.Equal(t, "done   ", padded, "the session pads CHAR values")
	res, err = p.Process(ctx, newTask(1, 1, 0, 2), KeysOf([]string{"a", "b", "c"}), noop)
	require.NoError(t, err, "a padded status is still a status")
	require.Equal(t, [2]int64{1, 2}, [2]int64{res.Processed, res.Skipped})

	_, err = e.db.Exec("UPDATE dedup_record SET updated_at = updated_at - ?", (40 * 24 * time.Hour).Milliseconds())
	require.NoError(t, err)
	ar, err := Archive(ctx, e.db, ArchiveConfig{Dialect: DialectMySQL, Pause: -1, Logger: testLogger(t)})
	require.NoError(t, err)
	require.Equal(t, int64(3), ar.Moved, "the archive recognises padded done rows")
}
