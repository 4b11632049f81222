package gen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck writes a package with a go:generate line and checks what
// Check says of it: current, stale, a query used by no code.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("q.sql", "-- name: One\nSELECT 1;\n-- name: Two\nSELECT 2;\n-- name: Two.sqlite\nSELECT 'two';\n")
	write("other.sql", "-- name: Three\nSELECT 3;\n")
	write("p.go", "package p\n\n//go:generate "+Command+" -pkg p -exclude other.sql *.sql\n\nvar _ = []query{qOne, qTwo}\n")
	if err := Check(dir); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("no generated file: %v", err)
	}
	files, err := Generate(dir, strings.Fields("-pkg p -exclude other.sql *.sql"))
	if err != nil || len(files) != 1 {
		t.Fatal(files, err)
	}
	out, src := files[0].Path, files[0].Src
	if out != "queries_gen.go" || !strings.Contains(string(src), "qOne query = iota\n\tqTwo\n)") || strings.Contains(string(src), "Three") {
		t.Errorf("generated %s:\n%s", out, src)
	}
	write(out, string(src))
	if err := Check(dir); err != nil {
		t.Errorf("current: %v", err)
	}
	write("q.sql", "-- name: One\nSELECT 1;\n")
	if err := Check(dir); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Errorf("a query removed: %v", err)
	}
	write("q.sql", "-- name: One\nSELECT 1;\n-- name: Two\nSELECT 2;\n-- name: Dead\nSELECT 0;\n")
	files, _ = Generate(dir, strings.Fields("-pkg p -exclude other.sql *.sql"))
	write(out, string(files[0].Src))
	if err := Check(dir); err == nil || !strings.Contains(err.Error(), "used by no code") || !strings.Contains(err.Error(), "Dead") {
		t.Errorf("a dead query: %v", err)
	}
	if _, err := Generate(dir, []string{"-pkg", "p"}); err == nil {
		t.Error("no files: no error")
	}
}

// TestTypedErrors: what the generator refuses in a typed query, each with
// a message that names the query and what to change.
func TestTypedErrors(t *testing.T) {
	const goFile = "package p\n\ntype Item struct {\n\tID int64 `db:\"id\"`\n\tName string `db:\"name\"`\n}\n\n//go:generate " + Command + " -pkg p -typed queries -dialects a,b q.sql\n"
	for sqlText, want := range map[string]string{
		"-- name: X :one\n-- in: id int64\n-- out: id int64, name string\nSELECT id, name FROM t WHERE id = ? AND x = ?;": "2 placeholders but 1 parameters",
		"-- name: X :one\n-- in: id int64\n-- out: id int64\nSELECT id, name FROM t WHERE id = ?;":                        "2 columns but 1 in its out line",
		"-- name: X :one\n-- out: name string, id int64\nSELECT id, name FROM t;":                                         "column 1 is id but its out line says name",
		"-- name: X :many\n-- out: Item\nSELECT id, title FROM t;":                                                        "column title has no field",
		"-- name: X :many\n-- out: Item\nSELECT id, COUNT(*) FROM t;":                                                     "column 2 has no name",
		"-- name: X :many\n-- out: Missing\nSELECT id FROM t;":                                                            "no struct type Missing",
		"-- name: X :all\nSELECT 1;":                                                          "unknown kind :all",
		"-- name: X\n-- in: id int64\nDELETE FROM t WHERE id = ?;":                            "no kind",
		"-- name: X :exec\n-- out: id int64\nDELETE FROM t;":                                  "remove its out line",
		"-- name: X :one\nSELECT 1;":                                                          "needs an out line",
		"-- name: X :exec\n-- in: id int64, id string\nDELETE FROM t WHERE id = ? OR id = ?;": "id is int64 and string",
		"-- name: X :exec\n-- in: id int64\nDELETE FROM t WHERE id = ?;\n-- name: X.b :exec\n-- in: id int64\nDELETE FROM t;": "typed in two blocks",
		"-- name: X :exec\n-- in: id int64\nDELETE FROM t WHERE id = ?;\n-- name: X.b\nDELETE FROM t;":                        "dialect b: 0 placeholders",
		"-- name: X :exec\n-- in: id\nDELETE FROM t WHERE id = ?;":                                                            `"id" is not "name type"`,
		"-- name: X :exec\n-- in: Item\nUPDATE t SET name = :name WHERE id = :id AND x = :x;":                                 `parameter :x has no field with the tag db:"x" in Item`,
		"-- name: X :exec\n-- in: Missing\nUPDATE t SET name = :name;":                                                        `"Missing" is not "name type", nor a struct type`,
		"-- name: X :exec\n-- in: Item\nUPDATE t SET name = ? WHERE id = :id;":                                                "1 placeholders: a query that binds Item by name",
		"-- name: X :exec\n-- in: Item\nUPDATE t SET name = :name::text WHERE id = :id AND x = :x_y;":                         `parameter :x_y has no field`,
		"-- name: X :exec\n-- in: Item\nDELETE FROM t;":                                                                       "no :name parameter in Item",
		"-- name: X :execrows\n-- in: id int64, x int64\nINSERT INTO t (id) VALUES (?) ON CONFLICT DO UPDATE SET x = ?;":      "every placeholder in its VALUES tuple",
		"-- name: X :execrows\n-- in: Item\nINSERT INTO t (id, name) VALUES (:id, :name);":                                    "takes its rows' parameters by position",
		"-- name: X :execrows\n-- in: ids []int64\nINSERT INTO t (id) VALUES (?);":                                            "takes no IN list",
		"-- name: X :execrows\nINSERT INTO t (id) VALUES (1);":                                                                "needs an in line",
		"-- name: X :execrows\n-- in: id int64\nDELETE FROM t WHERE id = ?;":                                                  "every placeholder in its VALUES tuple",
	} {
		dir := t.TempDir()
		for name, text := range map[string]string{"q.sql": sqlText, "p.go": goFile} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Generate(dir, strings.Fields("-pkg p -typed queries -dialects a,b q.sql"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error with %q", sqlText, err, want)
		}
	}
}

// TestSelectColumns: the column names the generator reads from a query.
func TestSelectColumns(t *testing.T) {
	for text, want := range map[string]string{
		"SELECT a, t.b, c AS d, COUNT(*), x + 1 AS y FROM t":                       "a,b,d,,y",
		"WITH w AS (SELECT p, q FROM z) SELECT DISTINCT w.p FROM w":                "p",
		"SELECT {{now_ms}} AS db_now":                                              "db_now",
		"SELECT COALESCE(MAX(id), 0) AS m, 'a, b' AS s FROM t WHERE x = ?":         "m,s",
		"SELECT a -- a comment, b\n, b FROM t UNION SELECT c, d FROM u":            "a,b",
		"SELECT id, revoked_at IS NOT NULL AS revoked FROM api_token LIMIT 1":      "id,revoked",
		"INSERT INTO t (a) SELECT b FROM u":                                        "b",
		"SELECT CASE WHEN a THEN 1 ELSE 0 END AS k, (SELECT 1 FROM u) AS s FROM t": "k,s",
	} {
		got, err := selectColumns(text)
		if err != nil || strings.Join(got, ",") != want {
			t.Errorf("%q: got %q, %v; want %q", text, got, err, want)
		}
	}
	if _, err := selectColumns("DELETE FROM t"); err == nil {
		t.Error("no SELECT: no error")
	}
	for in, want := range map[string]string{"APIKeyAuth": "apiKeyAuth", "JobByID": "jobByID", "XXL": "xxl", "Run": "run", "run": "run"} {
		if got := unexported(in); got != want {
			t.Errorf("unexported(%s) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{"ids": "ids", "user_id": "userID", "type": "typeArg", "jobID": "jobID", "api_key_ids": "apiKeyIDs"} {
		if got := argName(in); got != want {
			t.Errorf("argName(%s) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{"user_id": "UserID", "api_key_ids": "APIKeyIDs", "dbNow": "DbNow", "scheduled_at": "ScheduledAt"} {
		if got := goName(in); got != want {
			t.Errorf("goName(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestTypedStructAndRows: the methods of a query that binds a struct by
// its db tags (-- in: Item) and of a multi-row insert (:execrows).
func TestTypedStructAndRows(t *testing.T) {
	const goFile = "package p\n\ntype Item struct {\n\tID int64 `db:\"id\"`\n\tName string `db:\"name\"`\n}\n"
	const sqlText = `-- name: ItemUpdate :exec
-- in: Item
UPDATE t SET name = :name WHERE id = :id AND name <> :name;

-- name: ItemInsert :lastid
-- in: Item
INSERT INTO t (id, name) VALUES (:id, :name);

-- name: ItemsInsert :execrows
-- in: id int64, name string, id int64
INSERT INTO t (id, name, copy) VALUES (?, ?, ? + 1) ON CONFLICT (id) DO NOTHING;

-- name: IDsInsert :execrows
-- in: id int64
INSERT INTO u (id) VALUES (?);
`
	dir := t.TempDir()
	for name, text := range map[string]string{"q.sql": sqlText, "p.go": goFile} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := Generate(dir, strings.Fields("-pkg p -typed queries -dialects a,b q.sql"))
	if err != nil || len(files) != 2 {
		t.Fatal(files, err)
	}
	src := string(files[1].Src)
	for _, want := range []string{
		"func (q queries) ItemUpdate(ctx context.Context, db dbtx, arg Item) (int64, error) {\n\ttext, args, err := sqlx.Named(q[qItemUpdate], arg)\n",
		"res, err := db.ExecContext(ctx, text, args...)",
		"func (q queries) ItemInsert(ctx context.Context, db dbtx, arg Item) (int64, error) {",
		"return res.LastInsertId()",
		"type itemsInsertParams struct {\n\tID   int64  // id\n\tName string // name\n}",
		"func (q queries) ItemsInsert(ctx context.Context, db dbtx, rows []itemsInsertParams) (int64, error) {\n\tif len(rows) == 0 {\n\t\treturn 0, nil\n\t}\n",
		"for _, p := range rows {\n\t\targs = append(args, p.ID, p.Name, p.ID)\n\t}",
		"db.ExecContext(ctx, namedsql.MultiRow(q[qItemsInsert], len(rows)), args...)",
		"func (q queries) IDsInsert(ctx context.Context, db dbtx, rows []int64) (int64, error) {",
		"for _, id := range rows {\n\t\targs = append(args, id)\n\t}",
		"\"github.com/jmoiron/sqlx\"\n\t\"github.com/shardjob/shardjob/sql/namedsql\"\n",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("generated file lacks %q:\n%s", want, src)
		}
	}
	if strings.Contains(src, "database/sql") {
		t.Errorf("generated file imports database/sql, which it does not use:\n%s", src)
	}
}
