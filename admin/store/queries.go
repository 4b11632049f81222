package store

import (
	"bufio"
	"fmt"
	"io/fs"
	"strings"

	sqlfiles "github.com/shardjob/shardjob/sql"
)

// queries maps a query name to its dialect-specific text.
type queries map[string]string

var macros = map[string]map[string]string{
	sqlfiles.MySQL: {
		"{{now_ms}}":                 "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)",
		"{{insert_ignore}}":          "INSERT IGNORE",
		"{{for_update_skip_locked}}": "FOR UPDATE SKIP LOCKED",
		"{{for_update}}":             "FOR UPDATE",
		"{{lock_shared}}":            "LOCK IN SHARE MODE",
	},
	sqlfiles.SQLite: {
		"{{now_ms}}":                 "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
		"{{insert_ignore}}":          "INSERT OR IGNORE",
		"{{for_update_skip_locked}}": "",
		"{{for_update}}":             "",
		"{{lock_shared}}":            "",
	},
}

// Queries returns every named query of sql/queries*.sql for dialect, macros
// replaced, for packages that run their own statements on the platform
// database (retention).
func Queries(dialect string) (map[string]string, error) {
	return loadQueries(dialect)
}

func loadQueries(dialect string) (queries, error) {
	names, err := fs.Glob(sqlfiles.FS, "queries*.sql")
	if err != nil {
		return nil, fmt.Errorf("list embedded queries: %w", err)
	}
	var all strings.Builder
	for _, name := range names { // fs.Glob returns names in lexical order
		raw, err := sqlfiles.FS.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read embedded queries %s: %w", name, err)
		}
		all.Write(raw)
		all.WriteString("\n")
	}
	return parseQueries(all.String(), dialect)
}

func parseQueries(text, dialect string) (queries, error) {
	m, ok := macros[dialect]
	if !ok {
		return nil, fmt.Errorf("unknown dialect %q", dialect)
	}
	out := queries{}
	var name string
	var body strings.Builder
	flush := func() error {
		if name == "" {
			return nil
		}
		q := strings.TrimSpace(body.String())
		q = strings.TrimSuffix(q, ";")
		for k, v := range m {
			q = strings.ReplaceAll(q, k, v)
		}
		if strings.Contains(q, "{{") {
			return fmt.Errorf("query %s: unknown macro in %q", name, q)
		}
		if _, dup := out[name]; dup {
			return fmt.Errorf("query %s defined twice", name)
		}
		out[name] = q
		body.Reset()
		return nil
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "-- name: "); ok {
			if err := flush(); err != nil {
				return nil, err
			}
			name = strings.TrimSpace(rest)
			continue
		}
		if name == "" || strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

func (q queries) get(name string) string {
	s, ok := q[name]
	if !ok {
		panic("store: no query named " + name) // programmer error, caught by tests
	}
	return s
}

// multiRow expands the last VALUES tuple of an insert to n tuples.
func multiRow(q string, n int) string {
	i := strings.LastIndex(q, "VALUES")
	if i < 0 || n <= 1 {
		return q
	}
	tuple := strings.TrimSpace(q[i+len("VALUES"):])
	var b strings.Builder
	b.WriteString(q[:i+len("VALUES")])
	b.WriteByte(' ')
	for k := 0; k < n; k++ {
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tuple)
	}
	return b.String()
}
