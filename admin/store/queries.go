package store

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	sqlfiles "github.com/shardjob/shardjob/sql"
	"github.com/shardjob/shardjob/sql/namedsql"
)

//go:generate go run github.com/shardjob/shardjob/sql/namedsql/gen/namegen -pkg store -type query -prefix q -o queries_gen.go -typed queries -dialects mysql,postgres,sqlite -imports msg=github.com/shardjob/shardjob/admin/msg -exclude queries_retention.sql ../../sql/queries*.sql

// queries holds the text of each named query for one dialect, macros
// replaced, indexed by the generated constants of queries_gen.go.
type queries []string

// hintQueries are the reads that only tune the scheduler's loops (when to
// wake, how wide the pre-read window): a time limit may abort them
// (Config.HintTimeLimit).
var hintQueries = []query{qJobNextDue, qJobNextDueIn, qJobCountDue, qJobCountDueIn, qJobNextPauseEnd, qJobNextPauseEndIn}

// withTimeLimit returns a copy of q in which MariaDB aborts the queries
// named by which after d (SET STATEMENT max_statement_time … FOR).
func (q queries) withTimeLimit(which []query, d time.Duration) queries {
	out := slices.Clone(q)
	for _, w := range which {
		out[w] = "SET STATEMENT max_statement_time=" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " FOR " + q[w]
	}
	return out
}

var macros = map[string]map[string]string{
	sqlfiles.MySQL: {
		"{{now_ms}}":                 "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)",
		"{{insert_ignore}}":          "INSERT IGNORE",
		"{{for_update_skip_locked}}": "FOR UPDATE SKIP LOCKED",
		"{{for_update}}":             "FOR UPDATE",
		"{{lock_shared}}":            "LOCK IN SHARE MODE",
		"{{force_primary}}":          "FORCE INDEX (PRIMARY)",
		// STRAIGHT_JOIN reads the left table first whatever the statistics
		// say: during a herd they lag behind the fast-growing attempt, run
		// and job tables (TestJoinInOrderHoldsWithStaleStatistics).
		"{{join_in_order}}": "STRAIGHT_JOIN",
		"{{returning_id}}":  "",
		"{{idiv}}":          "DIV", // integer division (/ is exact division)
	},
	sqlfiles.Postgres: {
		// statement_timestamp(): the start of the statement, as MySQL's NOW(3)
		// (now() would be the start of the transaction).
		"{{now_ms}}":                 "CAST(FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000) AS BIGINT)",
		"{{insert_ignore}}":          "INSERT", // and ON CONFLICT DO NOTHING at the end: see expandMacros
		"{{for_update_skip_locked}}": "FOR UPDATE SKIP LOCKED",
		"{{for_update}}":             "FOR UPDATE",
		"{{lock_shared}}":            "FOR SHARE",
		"{{force_primary}}":          "", // no index hints; rows lock in the order the plan reads them
		"{{join_in_order}}":          "JOIN",
		"{{returning_id}}":           returningID,
		"{{idiv}}":                   "/", // of integers: an integer
	},
	sqlfiles.SQLite: {
		"{{now_ms}}":                 "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
		"{{insert_ignore}}":          "INSERT OR IGNORE",
		"{{for_update_skip_locked}}": "",
		"{{for_update}}":             "",
		"{{lock_shared}}":            "",
		"{{force_primary}}":          "", // one writer: no lock order
		// SQLite's planner keeps the left table of a CROSS JOIN outer.
		"{{join_in_order}}": "CROSS JOIN",
		"{{returning_id}}":  "",
		"{{idiv}}":          "/", // of integers: an integer
	},
}

// callMacros are the macros with an argument, "{{name(arg)}}": what each
// dialect puts in their place.
var callMacros = map[string]map[string]func(arg string) string{
	sqlfiles.MySQL: {
		// upsert(key columns): starts the assignments of a multi-row upsert.
		"upsert": func(string) string { return "ON DUPLICATE KEY UPDATE" },
		// excluded(column): the value the upsert tried to insert.
		"excluded": func(col string) string { return "VALUES(" + col + ")" },
		// force_index(index): read the table by that index whatever the
		// statistics say. An IN list longer than eq_range_index_dive_limit
		// (200) is costed from the index statistics, which lag behind a
		// herd: with a table "empty" by them, a scan of it looked cheaper
		// than the range (TestInListsKeepTheirIndexWithStaleStatistics).
		"force_index": func(index string) string { return "FORCE INDEX (" + index + ")" },
		// partition_hash(column): the 32-bit hash of partition.Of.
		"partition_hash": partitionHash("DIV"),
	},
	sqlfiles.Postgres: {
		"upsert":         func(keys string) string { return "ON CONFLICT(" + keys + ") DO UPDATE SET" },
		"excluded":       func(col string) string { return "excluded." + col },
		"force_index":    func(string) string { return "" }, // no index hints
		"partition_hash": partitionHash("/"),
	},
	sqlfiles.SQLite: {
		"upsert":         func(keys string) string { return "ON CONFLICT(" + keys + ") DO UPDATE SET" },
		"excluded":       func(col string) string { return "excluded." + col },
		"force_index":    func(string) string { return "" }, // no index hints
		"partition_hash": partitionHash("/"),
	},
}

// partitionHash writes the hash of partition.Of for an integer column with
// the dialect's integer division: the column's low and high 32 bits added,
// modulo 2^32, times 1640531527, modulo 2^32. Every intermediate value is
// below 2^63 (for positive ids), so no dialect overflows.
func partitionHash(idiv string) func(col string) string {
	return func(col string) string {
		return fmt.Sprintf("(((%[1]s %% 4294967296 + %[1]s %[2]s 4294967296) %% 4294967296) * 1640531527 %% 4294967296)", col, idiv)
	}
}

var callMacro = regexp.MustCompile(`\{\{(\w+)\(([^)]*)\)\}\}`)

// Queries returns every named query of sql/queries*.sql for dialect, macros
// replaced, for packages that run their own statements on the platform
// database (retention, whose names are typed in that package).
func Queries(dialect string) (map[string]string, error) {
	m, ok := macros[dialect]
	if !ok {
		return nil, fmt.Errorf("unknown dialect %q", dialect)
	}
	files, err := fs.Glob(sqlfiles.FS, "queries*.sql")
	if err != nil {
		return nil, fmt.Errorf("list embedded queries: %w", err)
	}
	var all []namedsql.Query
	where := map[string]string{} // name: its file, for "defined twice"
	for _, file := range files {
		raw, err := sqlfiles.FS.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read embedded queries %s: %w", file, err)
		}
		qs, err := namedsql.Parse(string(raw))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for _, q := range qs {
			if other, dup := where[q.Name]; dup && other != file {
				return nil, fmt.Errorf("query %s defined in %s and %s", q.Name, other, file)
			}
			where[q.Name] = file
		}
		all = append(all, qs...)
	}
	texts, err := namedsql.ForDialect(all, dialect, sqlfiles.Dialects)
	if err != nil {
		return nil, err
	}
	for name, q := range texts {
		if texts[name], err = expandMacros(q, dialect, m); err != nil {
			return nil, fmt.Errorf("query %s: %w", name, err)
		}
	}
	return texts, nil
}

// loadQueries returns the store's queries for dialect.
func loadQueries(dialect string) (queries, error) {
	texts, err := Queries(dialect)
	if err != nil {
		return nil, err
	}
	return namedsql.Select(texts, queryNames[:])
}

// expandMacros replaces the macros of q (m: those of dialect).
func expandMacros(q, dialect string, m map[string]string) (string, error) {
	if dialect == sqlfiles.Postgres && strings.Contains(q, "{{insert_ignore}}") {
		q = ignoreConflicts(q)
	}
	for k, v := range m {
		q = strings.ReplaceAll(q, k, v)
	}
	var unknown string
	q = callMacro.ReplaceAllStringFunc(q, func(call string) string {
		sub := callMacro.FindStringSubmatch(call)
		f, ok := callMacros[dialect][sub[1]]
		if !ok {
			unknown = call
			return call
		}
		return f(strings.TrimSpace(sub[2]))
	})
	if unknown != "" || strings.Contains(strings.ReplaceAll(q, filtersMarker, ""), "{{") {
		return "", fmt.Errorf("unknown macro in %q", q)
	}
	return q, nil
}

// ignoreConflicts ends an {{insert_ignore}} statement with PostgreSQL's
// ON CONFLICT DO NOTHING, before its {{returning_id}} if it has one.
func ignoreConflicts(q string) string {
	q = strings.TrimRight(q, " \n\t;")
	const ret = "{{returning_id}}"
	tail := ""
	if strings.HasSuffix(q, ret) {
		q, tail = strings.TrimRight(strings.TrimSuffix(q, ret), " \n\t"), " "+ret
	}
	return q + " ON CONFLICT DO NOTHING" + tail
}

// get returns the text of query n.
func (q queries) get(n query) string { return q[n] }

// filtersMarker stands where a list query with optional conditions
// (RunList) takes them; filters fills it in at run time.
const filtersMarker = "{{filters}}"

// filters builds the optional conditions of a list query: add each one that
// applies, with its arguments, then query puts "WHERE c1 AND c2 …" (or
// nothing) in the place of the query's {{filters}}.
type filters struct {
	conds []string
	args  []any
}

// add adds cond (SQL with a ? per argument) and its arguments.
func (f *filters) add(cond string, args ...any) {
	f.conds = append(f.conds, cond)
	f.args = append(f.args, args...)
}

// in adds "col IN (?, …)" with one placeholder per value (at least one).
func (f *filters) in(col string, values []string) {
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	f.add(col+" IN (?"+strings.Repeat(", ?", len(values)-1)+")", args...)
}

// query returns q with its {{filters}} filled in, and the arguments: those
// of the conditions, then after (the placeholders after {{filters}}).
func (f *filters) query(q string, after ...any) (string, []any) {
	where := ""
	if len(f.conds) > 0 {
		where = "WHERE " + strings.Join(f.conds, " AND ")
	}
	return strings.Replace(q, filtersMarker, where, 1), append(slices.Clip(f.args), after...)
}

// caseRowsPerStatement bounds the rows of one "set by key" update: up to
// about 4 placeholders a row and column, well under MySQL's 65,535 and
// SQLite's 32,766 placeholders.
const caseRowsPerStatement = 1000

// execByKey runs the named "set by key" update (byKey) for the rows ids
// (sorted) in tx, in statements of up to caseRowsPerStatement rows, and
// returns how many rows matched.
func (s *Store) execByKey(ctx context.Context, tx *sqlx.Tx, name query, key string, ids []int64, cols ...[]any) (int64, error) {
	var matched int64
	for start := 0; start < len(ids); start += caseRowsPerStatement {
		end := min(start+caseRowsPerStatement, len(ids))
		part := make([][]any, len(cols))
		for c := range cols {
			part[c] = cols[c][start:end]
		}
		q, args, err := byKey(s.q.get(name), key, ids[start:end], part...)
		if err != nil {
			return matched, err
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return matched, fmt.Errorf("%s of %d rows: %w", name, end-start, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return matched, fmt.Errorf("%s of %d rows: %w", name, end-start, err)
		}
		matched += n
	}
	return matched, nil
}

// byKey expands a named "set by key" update for the rows whose integer key
// column is key, ids sorted (see queries.sql): the c-th
// "CASE key WHEN ? THEN ? END" becomes an expression that maps each id to
// its value in cols[c], and "key IN (?)" lists the ids.
// Values must be comparable (strings, numbers, sql.Null*). It returns the
// statement and its arguments.
//
// The expression is a binary search on id down to short linear CASEs, and
// a range of ids that share a value gets that value alone: a plain CASE of
// n arms costs each of the n rows O(n) comparisons (a 256-row update of
// slot_attempt took 14 ms instead of 4 ms on MariaDB), and most columns of
// a batch of results hold one value (status succeeded, an empty error).
func byKey(q, key string, ids []int64, cols ...[]any) (string, []any, error) {
	marker := "CASE " + key + " WHEN ? THEN ? END"
	in := key + " IN (?)"
	if len(ids) == 0 {
		return "", nil, fmt.Errorf("update by %s: no rows", key)
	}
	parts := strings.Split(q, marker)
	if len(parts)-1 != len(cols) {
		return "", nil, fmt.Errorf("update by %s: %d value lists for %d CASE expressions in %q", key, len(cols), len(parts)-1, q)
	}
	var b strings.Builder
	args := make([]any, 0, (2*len(cols)+1)*len(ids))
	for c, col := range cols {
		if len(col) != len(ids) {
			return "", nil, fmt.Errorf("update by %s: %d values for %d rows", key, len(col), len(ids))
		}
		if strings.Contains(parts[c], "?") {
			return "", nil, fmt.Errorf("update by %s: a placeholder before a CASE expression in %q", key, q)
		}
		b.WriteString(parts[c])
		args = caseTree(&b, args, key, ids, col, 0, len(ids))
	}
	last := parts[len(parts)-1]
	if strings.Count(last, "?") != 1 || !strings.Contains(last, in) {
		return "", nil, fmt.Errorf("update by %s: want one placeholder, in %q, after the CASE expressions of %q", key, in, q)
	}
	b.WriteString(strings.Replace(last, in, key+" IN (?"+strings.Repeat(", ?", len(ids)-1)+")", 1))
	for _, id := range ids {
		args = append(args, id)
	}
	return b.String(), args, nil
}

// caseLeaf is the most arms of a linear CASE in byID's search tree.
const caseLeaf = 8

// caseTree writes the expression that maps ids[lo:hi] to vals[lo:hi] and
// appends its arguments.
func caseTree(b *strings.Builder, args []any, key string, ids []int64, vals []any, lo, hi int) []any {
	same := true
	for r := lo + 1; r < hi && same; r++ {
		same = vals[r] == vals[lo]
	}
	switch {
	case same:
		b.WriteString("?")
		return append(args, vals[lo])
	case hi-lo <= caseLeaf:
		b.WriteString("CASE " + key)
		for r := lo; r < hi; r++ {
			b.WriteString(" WHEN ? THEN ?")
			args = append(args, ids[r], vals[r])
		}
		b.WriteString(" END")
		return args
	}
	mid := (lo + hi) / 2
	b.WriteString("CASE WHEN " + key + " < ? THEN ")
	args = caseTree(b, append(args, ids[mid]), key, ids, vals, lo, mid)
	b.WriteString(" ELSE ")
	args = caseTree(b, args, key, ids, vals, mid, hi)
	b.WriteString(" END")
	return args
}
