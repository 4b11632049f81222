package records

import (
	"bufio"
	"embed"
	"fmt"
	"slices"
	"strings"

	"github.com/shardjob/shardjob/sql/namedsql"
)

// sqlFS holds the DDL of each dialect and the named queries. The SQL stays
// in .sql files so that it can be reviewed (and run by hand) as SQL.
//
//go:embed sql/mysql.sql sql/postgres.sql sql/sqlite.sql sql/queries.sql sql/archive.sql
var sqlFS embed.FS

// Dialects.
const (
	DialectMySQL    = "mysql"    // MySQL 8 or MariaDB >= 10.6 (go-sql-driver/mysql)
	DialectPostgres = "postgres" // PostgreSQL >= 13 (pgx's stdlib, lib/pq: any driver taking $1 placeholders)
	DialectSQLite   = "sqlite"   // SQLite >= 3.35 (modernc.org/sqlite or any driver)
)

// dialects are the dialects of the package.
var dialects = []string{DialectMySQL, DialectPostgres, DialectSQLite}

var dialectMacros = map[string]map[string]string{
	DialectMySQL: {
		"{{now_ms}}":        "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)",
		"{{insert_ignore}}": "INSERT IGNORE",
		"{{for_update}}":    "FOR UPDATE",
	},
	DialectPostgres: {
		// statement_timestamp(): the start of the statement, as MySQL's NOW(3).
		"{{now_ms}}":        "CAST(FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000) AS BIGINT)",
		"{{insert_ignore}}": "INSERT", // and ON CONFLICT DO NOTHING at the end (parseQueries)
		"{{for_update}}":    "FOR UPDATE",
	},
	DialectSQLite: {
		// julianday rather than unixepoch('subsec'), which needs SQLite 3.42.
		"{{now_ms}}":        "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
		"{{insert_ignore}}": "INSERT OR IGNORE",
		"{{for_update}}":    "",
	},
}

// runtimeMacros are expanded per call, for the size of a batch.
var runtimeMacros = []string{"{{list}}", "{{cases}}", "{{rows}}"}

// DDL returns the CREATE statements of shard_lock and dedup_record for
// dialect ("mysql", "postgres" or "sqlite"), as shipped in sdk/records/sql/. Every
// statement is idempotent (IF NOT EXISTS). Processor.EnsureSchema runs the
// same text; DDL is for teams that apply schemas with their own migration
// tool.
func DDL(dialect string) (string, error) {
	if !slices.Contains(dialects, dialect) {
		return "", fmt.Errorf("records: unknown dialect %q: use %q, %q or %q", dialect, DialectMySQL, DialectPostgres, DialectSQLite)
	}
	b, err := sqlFS.ReadFile("sql/" + dialect + ".sql")
	if err != nil {
		return "", fmt.Errorf("records: read embedded DDL: %w", err)
	}
	return string(b), nil
}

// splitStatements cuts a SQL file into statements: comment lines are
// dropped and a statement ends with a line ending in ";".
func splitStatements(text string) []string {
	var out []string
	var cur strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		trim := strings.TrimSpace(line)
		if trim == "" || strings.HasPrefix(trim, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trim, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

//go:generate go run github.com/shardjob/shardjob/sql/namedsql/gen/namegen -pkg records -type query -prefix q -o queries_gen.go sql/queries.sql sql/archive.sql

// queries are the named queries of one dialect (sql/queries.sql and
// sql/archive.sql), macros expanded, indexed by the constants of
// queries_gen.go; on PostgreSQL (dollar) with numbered placeholders, those
// of a query with batch macros once expand has sized it.
type queries struct {
	texts  []string
	dollar bool
}

func loadQueries(dialect string) (queries, error) {
	var all []namedsql.Query
	for _, file := range []string{"sql/queries.sql", "sql/archive.sql"} {
		raw, err := sqlFS.ReadFile(file)
		if err != nil {
			return queries{}, fmt.Errorf("records: read embedded queries: %w", err)
		}
		qs, err := namedsql.Parse(string(raw))
		if err != nil {
			return queries{}, fmt.Errorf("records: %s: %w", file, err)
		}
		all = append(all, qs...)
	}
	texts, err := parseQueries(all, dialect)
	if err != nil {
		return queries{}, err
	}
	q, err := namedsql.Select(texts, queryNames[:])
	if err != nil {
		return queries{}, fmt.Errorf("records: %w", err)
	}
	out := queries{texts: q, dollar: dialect == DialectPostgres}
	if out.dollar {
		for i, text := range out.texts {
			if !hasRuntimeMacro(text) {
				out.texts[i] = namedsql.Dollar(text)
			}
		}
	}
	return out, nil
}

// hasRuntimeMacro reports whether q is sized per batch (expand).
func hasRuntimeMacro(q string) bool {
	for _, m := range runtimeMacros {
		if strings.Contains(q, m) {
			return true
		}
	}
	return false
}

// parseQueries returns the text of each query of qs for dialect, the
// dialect macros expanded: a block named "X.<dialect>" replaces X for that
// dialect (see package namedsql).
func parseQueries(qs []namedsql.Query, dialect string) (map[string]string, error) {
	macros, ok := dialectMacros[dialect]
	if !ok {
		return nil, fmt.Errorf("records: unknown dialect %q", dialect)
	}
	seen := map[string]bool{}
	for _, q := range qs { // the files are parsed one by one: a name twice over both
		full := q.Name + "." + q.Dialect
		if seen[full] {
			return nil, fmt.Errorf("records: query %s defined twice", q.Name)
		}
		seen[full] = true
	}
	texts, err := namedsql.ForDialect(qs, dialect, dialects)
	if err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	for name, q := range texts {
		if dialect == DialectPostgres && strings.Contains(q, "{{insert_ignore}}") {
			if strings.Contains(q, "{{rows}}") {
				return nil, fmt.Errorf("records: query %s: a multi-row {{insert_ignore}} needs a PostgreSQL text of its own (ON CONFLICT goes after the rows)", name)
			}
			q = strings.TrimRight(q, " \n\t;") + " ON CONFLICT DO NOTHING"
		}
		for k, v := range macros {
			q = strings.ReplaceAll(q, k, v)
		}
		rest := q
		for _, m := range runtimeMacros {
			rest = strings.ReplaceAll(rest, m, "")
		}
		if strings.Contains(rest, "{{") {
			return nil, fmt.Errorf("records: query %s: unknown macro in %q", name, q)
		}
		texts[name] = q
	}
	return texts, nil
}

// get returns the text of query n.
func (q queries) get(n query) string { return q.texts[n] }

// expand returns the text of query n sized for a batch of n rows (the
// package function expand), its placeholders numbered on PostgreSQL.
func (q queries) expand(name query, n int) string {
	text := expand(q.texts[name], n)
	if q.dollar {
		text = namedsql.Dollar(text)
	}
	return text
}

// expand replaces the runtime macros of q for a batch of n: {{list}} by n
// placeholders, {{cases}} by n "WHEN ? THEN ?" pairs, and "{{rows}} (tuple)"
// by n copies of the tuple.
func expand(q string, n int) string {
	var b strings.Builder
	b.Grow(len(q) + 3*n)
	for {
		i := strings.Index(q, "{{")
		if i < 0 {
			b.WriteString(q)
			return b.String()
		}
		b.WriteString(q[:i])
		q = q[i:]
		switch {
		case strings.HasPrefix(q, "{{list}}"):
			q = q[len("{{list}}"):]
			for k := range n {
				if k > 0 {
					b.WriteString(", ")
				}
				b.WriteByte('?')
			}
		case strings.HasPrefix(q, "{{cases}}"):
			q = q[len("{{cases}}"):]
			for range n {
				b.WriteString("WHEN ? THEN ? ")
			}
		case strings.HasPrefix(q, "{{rows}}"):
			// The tuple runs to the end of the query.
			tuple := strings.TrimSpace(q[len("{{rows}}"):])
			b.Grow(n * (len(tuple) + 2))
			for k := range n {
				if k > 0 {
					b.WriteString(", ")
				}
				b.WriteString(tuple)
			}
			q = ""
		default:
			panic("records: unexpanded macro in " + q) // parseQueries rejects these
		}
	}
}
