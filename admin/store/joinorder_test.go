package store_test

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// joinInOrderQueries are the periodic queries that read slot_attempt from
// the executors (or a job's runs) through {{join_in_order}}, each with the
// alias of the table they must start from.
var joinInOrderQueries = map[string]string{
	"AttemptsOfLostExecutors": "e",
	"ExecutorLoad":            "e",
	"PlacedSlots":             "e",
	"AppsPlacedSlots":         "e",
	"JobsPlacedSlots":         "r",
	"UtilizationSample":       "x",
	"XXLAttemptsOverdue":      "e",
}

// TestJoinInOrderHoldsWithStaleStatistics: on MariaDB the periodic queries
// that go from the executor table to their live attempts start from it
// even when the statistics say the attempt, run and job tables are empty —
// as they do during a herd, when those tables grow faster than InnoDB
// samples them. With a plain JOIN the optimizer then started
// XXLAttemptsOverdue from the job and run tables (every job, and its runs,
// read at each check: 228 ms a call during a 100,000-run herd with no
// XXL-JOB executor at all); {{join_in_order}} is STRAIGHT_JOIN there.
func TestJoinInOrderHoldsWithStaleStatistics(t *testing.T) {
	t.Parallel()
	s := storetest.Open(t, sqlfiles.MySQL)
	ctx := context.Background()
	db := s.DB().DB
	// One executor of each kind the queries select (online, lost,
	// XXL-JOB): no plan is "impossible WHERE" for want of one.
	_, err := db.ExecContext(ctx, `INSERT INTO executor (instance_id, app, address, capacity, handlers, state, registered_at, last_heartbeat, protocol)
		VALUES ('a', 'app', 'http://127.0.0.1:1', 10, '[]', 'online', 0, 0, 'shardjob'),
		       ('b', 'app', 'http://127.0.0.1:2', 10, '[]', 'lost', 0, 0, 'shardjob'),
		       ('c', 'app', 'http://127.0.0.1:3', 10, '[]', 'online', 0, 0, 'xxljob')`)
	require.NoError(t, err)
	for _, table := range []string{"executor", "job", "job_run", "slot_attempt"} {
		_, err := db.ExecContext(ctx, "ANALYZE TABLE "+table)
		require.NoError(t, err)
	}
	queries, err := store.Queries(sqlfiles.MySQL)
	require.NoError(t, err)
	for name, first := range joinInOrderQueries {
		q, ok := queries[name]
		require.True(t, ok, name)
		require.Contains(t, q, "STRAIGHT_JOIN", name)
		plan := mysqlPlan(t, db, name, q)
		// The rows of one SELECT are in join order: the first of the
		// SELECT that reads the start table must be that table.
		found := false
		for i, step := range plan {
			if step.table != first {
				continue
			}
			found = true
			for _, before := range plan[:i] {
				require.NotEqual(t, step.id, before.id, "%s reads %s before %s: %v", name, before.table, first, plan)
			}
			break
		}
		require.True(t, found, "%s: no step reads %s: %v", name, first, plan)
	}
}

type planStep struct {
	id    sql.NullInt64
	table string
}

// mysqlPlan returns the select id and table of each row of EXPLAIN q, every
// placeholder bound to 1000 (0 would make LIMIT ? an empty plan).
func mysqlPlan(t *testing.T, db *sql.DB, name, q string) []planStep {
	t.Helper()
	args := make([]any, strings.Count(q, "?"))
	for i := range args {
		args[i] = 1000
	}
	rows, err := db.QueryContext(context.Background(), "EXPLAIN "+q, args...)
	require.NoError(t, err, name)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var plan []planStep
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		var step planStep
		for i, c := range cols {
			switch c {
			case "id":
				if vals[i].Valid {
					n, err := strconv.ParseInt(vals[i].String, 10, 64)
					require.NoError(t, err, "EXPLAIN id %q", vals[i].String)
					step.id = sql.NullInt64{Int64: n, Valid: true}
				}
			case "table":
				step.table = vals[i].String
			}
		}
		plan = append(plan, step)
	}
	require.NoError(t, rows.Err())
	return plan
}

// inListQueries are the hot-path queries whose IN lists are longer than
// MariaDB's eq_range_index_dive_limit (200), with the alias of the table
// that must be read by an index.
var inListQueries = map[string]string{
	"RunsSlotCounts": "a", // a settle batch: up to 256 runs
}

// TestInListsKeepTheirIndexWithStaleStatistics: an IN list of more than 200
// values is costed from the index statistics, not by looking into the
// index; during a herd they say the attempt table is (nearly) empty, and
// the optimizer then read all of slot_attempt for every settle batch
// (RunsSlotCounts examined 341,204 rows for the 10,000 runs of a 10k herd,
// 920 ms of server time). {{force_index}} keeps the range (30,000 rows
// examined in the same herd): without it the plan reads slot_attempt whole.
func TestInListsKeepTheirIndexWithStaleStatistics(t *testing.T) {
	t.Parallel()
	s := storetest.Open(t, sqlfiles.MySQL)
	ctx := context.Background()
	db := s.DB().DB
	for _, table := range []string{"job", "job_run", "slot_attempt", "slot_stats"} {
		_, err := db.ExecContext(ctx, "ANALYZE TABLE "+table)
		require.NoError(t, err)
	}
	queries, err := store.Queries(sqlfiles.MySQL)
	require.NoError(t, err)
	ids := make([]string, 250)
	for i := range ids {
		ids[i] = strconv.Itoa(5000 + i)
	}
	for name, alias := range inListQueries {
		q, ok := queries[name]
		require.True(t, ok, name)
		require.Contains(t, q, "FORCE INDEX", name)
		q = strings.Replace(q, "IN (?)", "IN ("+strings.Join(ids, ",")+")", 1)
		rows, err := db.QueryContext(ctx, "EXPLAIN "+q)
		require.NoError(t, err, name)
		found := false
		for rows.Next() {
			var table, access sql.NullString
			cols, err := rows.Columns()
			require.NoError(t, err)
			vals := make([]any, len(cols))
			for i, c := range cols {
				switch c {
				case "table":
					vals[i] = &table
				case "type":
					vals[i] = &access
				default:
					vals[i] = new(sql.RawBytes)
				}
			}
			require.NoError(t, rows.Scan(vals...))
			if table.String == alias {
				found = true
				require.NotContains(t, []string{"ALL", "index"}, access.String, "%s reads %s whole (%s)", name, alias, access.String)
			}
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		require.True(t, found, "%s: no step reads %s", name, alias)
	}
}
