package builtin

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

func TestCompileStatement(t *testing.T) {
	t.Parallel()
	both := []dialect{dialectMySQL, dialectSQLite}
	all := []dialect{dialectMySQL, dialectSQLite, dialectPostgres}
	pg := []dialect{dialectPostgres}
	for _, c := range []struct {
		in, want string
		dialects []dialect
	}{
		{"UPDATE t SET a = :x WHERE b = ? AND c = :slot", "UPDATE t SET a = ? WHERE b = ? AND c = ?", both},
		{"SELECT ':x', \"?\", `:y`, 'it''s :z', '; :w' FROM t;", "SELECT ':x', \"?\", `:y`, 'it''s :z', '; :w' FROM t", both},
		{"SELECT @v := 1, a::text -- :c ?\n, /* :d ? */ :e;", "SELECT @v := 1, a::text -- :c ?\n, /* :d ? */ ?", both},
		{"SELECT 'a\\\\' FROM t", "SELECT 'a\\\\' FROM t", both}, // 'a\\': a backslash either way
		{"SELECT 'C:\\dir\\' FROM t WHERE a = :a", "SELECT 'C:\\dir\\' FROM t WHERE a = ?", []dialect{dialectSQLite}},
		{"SELECT [a;:b]] FROM t", "SELECT [a;:b]] FROM t", []dialect{dialectSQLite}},
		{"SELECT 1 -- it's\n", "SELECT 1 -- it's", both},
		{"SELECT 1 # it's :x; ?\n, :y", "SELECT 1 # it's :x; ?\n, ?", []dialect{dialectMySQL}},
		{"SELECT 1--:x", "SELECT 1--?", []dialect{dialectMySQL}}, // 1 - -?: no space after --
		{"SELECT 1--:x", "SELECT 1--:x", []dialect{dialectSQLite}},
		{"SELECT /*+ BKA(t) */ a FROM t", "SELECT /*+ BKA(t) */ a FROM t", both},

		// PostgreSQL: ? and :name become $1, $2, … in order, apart from a
		// name or number that would take them in.
		{"UPDATE t SET a = :x WHERE b = ? AND c = :slot;", "UPDATE t SET a = $1 WHERE b = $2 AND c = $3", pg},
		{"SELECT a?, ?b, x:y, 1?, ?$$ $$, a::text", "SELECT a $1, $2 b, x $3, 1 $4, $5 $$ $$, a::text", pg},
		{"SELECT ':x', \"?\", 'it''s :z', '; :w', 'C:\\' FROM t;", "SELECT ':x', \"?\", 'it''s :z', '; :w', 'C:\\' FROM t", pg},
		{"SELECT E'it\\'s; :x', e'\\\\', E'a''; ?' FROM t", "SELECT E'it\\'s; :x', e'\\\\', E'a''; ?' FROM t", pg},
		{"SELECT $$it's; :x$$, $a$ $$ ; ? $a$, $a_1$;$a$$a_1$, $é$;$é$", "SELECT $$it's; :x$$, $a$ $$ ; ? $a$, $a_1$;$a$$a_1$, $é$;$é$", pg},
		{"SELECT $a, a$1, e$$x, x$$, name'x', date'2026-01-01', $ :b", "SELECT $a, a$1, e$$x, x$$, name'x', date'2026-01-01', $ $1", pg},
		{"SELECT 1 /* a /* ; ? */ :b; */ , :c -- ;:d\r, ?", "SELECT 1 /* a /* ; ? */ :b; */ , $1 -- ;:d\r, $2", pg},
		{"SELECT E'a'\n'\\'; ?' -- continued, with escapes\n", "SELECT E'a'\n'\\'; ?' -- continued, with escapes", pg},
		{"SELECT E'a' -- comment\n\t'\\';?'", "SELECT E'a' -- comment\n\t'\\';?'", pg},
		{"SELECT 'a'\r'\\', ?", "SELECT 'a'\r'\\', $1", pg},
		{"SELECT 2 */* ; */ 3, 1 +-- ;\n2, `?`", "SELECT 2 */* ; */ 3, 1 +-- ;\n2, `$1`", pg},
		{"SELECT U&'d\\0061t;', U&\"a;\", B'01', X'3b', N'a;'", "SELECT U&'d\\0061t;', U&\"a;\", B'01', X'3b', N'a;'", pg},
	} {
		for _, d := range c.dialects {
			got, _, err := compileStatement(c.in, d)
			require.NoError(t, err, "%s: %q", d, c.in)
			require.Equal(t, c.want, got, "%s: %q", d, c.in)
		}
	}
	_, refs, err := compileStatement("SELECT ?, :slot, ?, :b", dialectSQLite)
	require.NoError(t, err)
	require.Equal(t, []argRef{{pos: 0}, {name: "slot"}, {pos: 1}, {name: "b"}}, refs)
	got, refs, err := compileStatement("SELECT ?, :slot, ?, :b", dialectPostgres)
	require.NoError(t, err)
	require.Equal(t, "SELECT $1, $2, $3, $4", got)
	require.Equal(t, []argRef{{pos: 0}, {name: "slot"}, {pos: 1}, {name: "b"}}, refs)

	for _, c := range []struct {
		in, want string
		dialects []dialect
	}{
		// The finding: MySQL's backslash reading hid a second statement from the SQLite check.
		{`UPDATE t SET a = 'a\'; DROP TABLE t; --'`, "text follows the ';' at byte 21", []dialect{dialectSQLite}},
		{`UPDATE t SET a = 'a\'; DROP TABLE t; --'`, "ends at a different place depending on whether the MySQL server reads backslashes", []dialect{dialectMySQL}},
		{`SELECT "a\" ; DROP TABLE t; -- "`, `the " literal at byte 7 ends at a different place`, []dialect{dialectMySQL}},
		{"SELECT 1 # ;\n; DROP TABLE t", "text follows the ';' at byte 13", []dialect{dialectMySQL}},
		{"SELECT 1 # '\n; DROP TABLE t; -- '", "text follows the ';' at byte 13", []dialect{dialectMySQL}},
		{"SELECT 1 --x ; DROP TABLE t", "text follows the ';' at byte 13", []dialect{dialectMySQL}},
		{"SELECT 1 /*! ; DROP TABLE t */", "executable comment /*!…*/ at byte 9", []dialect{dialectMySQL}},
		{"SELECT [a ; DROP TABLE t", "the [ identifier at byte 7 is not closed", []dialect{dialectSQLite}},
		{"SELECT 'a\x00'; DROP TABLE t", "a NUL character (\\u0000) at byte 9", all},
		{"-- only a comment\n/* and another */ ;", "empty statement", all},
		{"SELECT 1 /* ", "the /* comment at byte 9 is not closed", all},
		{"SELECT 'x", "the ' quote at byte 7 is not closed", all},
		{"CREATE TRIGGER r AFTER INSERT ON t BEGIN DELETE FROM t; END", "text follows the ';' at byte 54", all},
		{"SELECT 1; -- a comment", "text follows the ';' at byte 8", all},
		{"SELECT 1;;", "text follows the ';' at byte 8", all},
		// PostgreSQL: a backslash escapes nothing in '…', -- ends at a \r
		// too, comments nest, and E'…' goes on with its escapes after a
		// newline and a quote.
		{`UPDATE t SET a = 'a\'; DROP TABLE t; --'`, "text follows the ';' at byte 21", pg},
		{"SELECT 1 -- x\r; DROP TABLE t", "text follows the ';' at byte 14", pg},
		{"SELECT 1 /* a /* b */ ; DROP TABLE t", "the /* comment at byte 9 is not closed", pg},
		{"SELECT E'a'\n'\\'' ; DROP TABLE t; --'", "text follows the ';' at byte 17", pg},
		{"SELECT name'\\'; DROP TABLE t", "text follows the ';' at byte 14", pg},
		{"SELECT 1 AS x$$; DROP TABLE t; $$", "text follows the ';' at byte 15", pg},
		{"SELECT E'x", "the E' quote at byte 7 is not closed", pg},
		{"SELECT $a$ ; $b$", "the $a$ quote at byte 7 is not closed", pg},
		{"SELECT 'a' || $1", "the numbered placeholder at byte 14 is not supported: use ? or :name", pg},
		{"SELECT `a;b`", "text follows the ';' at byte 9", pg}, // ` is an operator character to PostgreSQL
		// Found by FuzzStatement: "--;" is two minus signs to MySQL, but
		// the statement goes without its ';', where "--" is a comment.
		{"--;", "the -- right before the ';' at byte 2", []dialect{dialectMySQL}},
		{"SELECT 1--;", "the -- right before the ';' at byte 10", []dialect{dialectMySQL}},
	} {
		for _, d := range c.dialects {
			_, _, err := compileStatement(c.in, d)
			require.ErrorContains(t, err, c.want, "%s: %q", d, c.in)
		}
	}
}

// TestValidateSQLEitherDialect: the admin accepts a statement valid for
// one dialect (the executor checks again with its data source's), and
// says what is wrong for each when it is valid for neither.
func TestValidateSQLEitherDialect(t *testing.T) {
	t.Parallel()
	require.NoError(t, ValidateParams(NameSQL, `{"datasource": "biz", "statement": "UPDATE t SET a = 'C:\\' WHERE id = :slot"}`), "SQLite")
	require.NoError(t, ValidateParams(NameSQL, `{"datasource": "biz", "statement": "UPDATE t SET a = 1 # it's MySQL\n"}`), "MySQL")
	require.NoError(t, ValidateParams(NameSQL, `{"datasource": "biz", "statement": "UPDATE t SET a = $$it's$$ WHERE id = :slot"}`), "PostgreSQL")
	err := ValidateParams(NameSQL, `{"datasource": "biz", "statement": "UPDATE t SET a = 'a\\'; DROP TABLE t; --'"}`)
	require.ErrorContains(t, err, "sql handler params: statement: for a MySQL data source: the ' literal at byte 17 ends at a different place")
	require.ErrorContains(t, err, "; for a SQLite data source: one statement only: text follows the ';' at byte 21")
	require.ErrorContains(t, err, "; for a PostgreSQL data source: one statement only: text follows the ';' at byte 21")
	err = ValidateParams(NameSQL, `{"datasource": "biz", "statement": "SELECT 1; SELECT 2"}`)
	require.EqualError(t, err, "sql handler params: statement: one statement only: text follows the ';' at byte 8; run each statement as a job of its own", "said once when the three say the same")
}

// TestSQLiteOneStatement: SQLite's own tokenizer catches a second
// statement that a misreading splitter would let through.
func TestSQLiteOneStatement(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{
		"SELECT ';'", "SELECT [;]", "SELECT `;`", "SELECT 1 -- ;", "SELECT 1 /* ; */",
		"CREATE TRIGGER r AFTER INSERT ON t BEGIN DELETE FROM t; END",
	} {
		require.NoError(t, sqliteOneStatement(ok), ok)
	}
	err := sqliteOneStatement(`UPDATE t SET a = 'a\'; DROP TABLE t; --'`) // as MySQL read it
	require.ErrorContains(t, err, `statement: one statement only: SQLite ends the statement at the ';' before " DROP TABLE t; --'"`)
	require.ErrorContains(t, sqliteOneStatement("SELECT '"+strings.Repeat(";", 257)+"'"), "257 ';' characters inside literals or comments, at most 256")
}

// TestSQLiteExecGuards: whatever text reaches a SQLite data source, even
// past compileStatement, runs as one statement or not at all, on a
// connection that attaches no database, whose authorizer is installed when
// it opens and is still there after each statement.
func TestSQLiteExecGuards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := NewSQL(SQLConfig{DataSources: map[string]DataSource{"biz": {Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "biz.db")}}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	db := s.dbs["biz"]
	attach := "ATTACH DATABASE '" + filepath.Join(t.TempDir(), "x.db") + "' AS x"
	_, err = db.ExecContext(ctx, attach)
	require.ErrorContains(t, err, "not authorized", "the connection hook installed the authorizer")

	_, err = s.exec(ctx, "biz", "CREATE TABLE item (id INTEGER)", nil)
	require.NoError(t, err)
	_, err = s.exec(ctx, "biz", "INSERT INTO item VALUES (1); DROP TABLE item", nil)
	require.ErrorContains(t, err, `one statement only: SQLite ends the statement at the ';' before " DROP TABLE item"`)
	var n int
	require.NoError(t, db.QueryRowContext(ctx, "SELECT COUNT(*) FROM item").Scan(&n))
	require.Zero(t, n, "not even the first statement ran")

	conn, err := db.Conn(ctx) // the one connection the statements ran on
	require.NoError(t, err)
	defer conn.Close()
	limit, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_ATTACHED, -1)
	require.NoError(t, err)
	require.Zero(t, limit, "at most 0 attached databases")
	_, err = conn.ExecContext(ctx, attach)
	require.ErrorContains(t, err, "not authorized", "the policy is back after the statement")
}

// rawSQLite is an in-memory database opened through SQLite's C API as the
// driver ships it (modernc.org/sqlite/lib), to ask SQLite's parser where
// the first statement of a text ends.
type rawSQLite struct {
	tls *libc.TLS
	db  uintptr
}

const ptrSize = strconv.IntSize / 8

func readPtr(p uintptr) uintptr {
	b := libc.GoBytes(p, ptrSize)
	if ptrSize == 8 {
		return uintptr(binary.NativeEndian.Uint64(b))
	}
	return uintptr(binary.NativeEndian.Uint32(b))
}

// openRawSQLite opens the database with tables t(a, b) and item(id, owner,
// note), so that statements naming them compile.
func openRawSQLite(tb testing.TB) *rawSQLite {
	tb.Helper()
	r := &rawSQLite{tls: libc.NewTLS()}
	name, err := libc.CString(":memory:")
	require.NoError(tb, err)
	pdb := r.tls.Alloc(ptrSize)
	rc := sqlite3.Xsqlite3_open_v2(r.tls, name, pdb, sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_CREATE|sqlite3.SQLITE_OPEN_MEMORY, 0)
	r.db = readPtr(pdb)
	r.tls.Free(ptrSize)
	libc.Xfree(r.tls, name)
	tb.Cleanup(func() {
		sqlite3.Xsqlite3_close_v2(r.tls, r.db)
		r.tls.Close()
	})
	require.Equal(tb, int32(sqlite3.SQLITE_OK), rc)
	schema, err := libc.CString("CREATE TABLE t(a, b); CREATE TABLE item(id INTEGER PRIMARY KEY, owner, note)")
	require.NoError(tb, err)
	defer libc.Xfree(r.tls, schema)
	require.Equal(tb, int32(sqlite3.SQLITE_OK), sqlite3.Xsqlite3_exec(r.tls, r.db, schema, 0, 0, 0))
	return r
}

// firstStatementEnd returns the number of bytes of text SQLite's parser
// reads as its first statement (the tail of sqlite3_prepare_v2), and false
// when that statement does not compile.
func (r *rawSQLite) firstStatementEnd(text string) (int, bool) {
	p, err := libc.CString(text)
	if err != nil {
		panic(err)
	}
	defer libc.Xfree(r.tls, p)
	out := r.tls.Alloc(2 * ptrSize)
	defer r.tls.Free(2 * ptrSize)
	rc := sqlite3.Xsqlite3_prepare_v2(r.tls, r.db, p, -1, out, out+ptrSize)
	if stmt := readPtr(out); rc == sqlite3.SQLITE_OK && stmt != 0 {
		sqlite3.Xsqlite3_finalize(r.tls, stmt)
	}
	if rc != sqlite3.SQLITE_OK {
		return 0, false
	}
	return int(readPtr(out+ptrSize) - p), true
}

// FuzzSQLiteOneStatement holds compileStatement's SQLite reading to SQLite's
// own: a statement it accepts is one statement to sqlite3_complete and, when
// it compiles, to sqlite3_prepare_v2 (nothing left after it); a ';' it says
// ends the statement ends one for sqlite3_complete too (but in CREATE
// TRIGGER, whose body it refuses).
func FuzzSQLiteOneStatement(f *testing.F) {
	for _, s := range []string{
		`UPDATE item SET note = 'a\'; DROP TABLE item; --'`,
		`UPDATE item SET note = 'it''s; ok' WHERE id = :slot`,
		`UPDATE item SET note = "a"";" WHERE id = ?`,
		"UPDATE item SET note = `;` WHERE [id;] = 1",
		"UPDATE item SET note = 1 -- ; DROP TABLE item\nWHERE id = 1",
		"UPDATE item SET note = 1 /* ; */ WHERE id = 1;",
		"UPDATE item SET note = 1 # ;\nWHERE id = 1",
		"UPDATE item SET note = x';' WHERE id = 1",
		"SELECT $a(;) FROM t",
		"SELECT [a]]; DROP TABLE t",
		"CREATE TRIGGER r AFTER INSERT ON t BEGIN DELETE FROM t; END; DROP TABLE t",
		"SELECT 1; ;", "SELECT 1;", ";", "/*", "SELECT '\u00e9;'", "SELECT 1 --\r; DROP TABLE t",
	} {
		f.Add(s)
	}
	raw := openRawSQLite(f)
	f.Fuzz(func(t *testing.T, stmt string) {
		compiled, _, err := compileStatement(stmt, dialectSQLite)
		if err == nil {
			if err := sqliteOneStatement(compiled); err != nil && !strings.Contains(err.Error(), "at most") {
				t.Fatalf("%q compiled to %q: one statement to compileStatement, not to sqlite3_complete: %v", stmt, compiled, err)
			}
			if end, ok := raw.firstStatementEnd(compiled); ok && end != len(compiled) {
				t.Fatalf("%q compiled to %q: one statement to compileStatement, SQLite's parser ends the first at byte %d", stmt, compiled, end)
			}
			return
		}
		var after *textAfterStatementError
		if !errors.As(err, &after) || strings.Contains(strings.ToLower(stmt), "trigger") {
			return // refusing is safe
		}
		complete, err := sqliteComplete(raw.tls, stmt[:after.at+1])
		require.NoError(t, err)
		if !complete {
			t.Fatalf("%q: compileStatement ends the statement at the ';' at byte %d, sqlite3_complete does not", stmt, after.at)
		}
	})
}

// FuzzStatement: compiling never panics, and a compiled statement compiles
// again to itself with only positional placeholders, as many as before, in
// every dialect (for PostgreSQL, once its $1, $2, … are ? again).
func FuzzStatement(f *testing.F) {
	for _, s := range []string{
		"SELECT :a, ?, ':b' -- :c\n/* ? */;", "x 'a\\'", "`:x` \"?\"", "::a :=", "?1", ";;", "[:a] # :b\n--:c", "\u0085#",
		"a? ?b $$?$$ $t$ $$ $t$ E'\\'?' e$$ :x$y", "/* /* ? */ :a */ ?", "E'a'\n'\\'?' -- ?\r?", "$1 ? $",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stmt string) {
		for _, d := range []dialect{dialectMySQL, dialectSQLite, dialectPostgres} {
			out, refs, err := compileStatement(stmt, d)
			if err != nil {
				continue
			}
			in := out
			if d == dialectPostgres {
				in = pgUncompiled(t, out)
			}
			again, refs2, err := compileStatement(in, d)
			if err != nil {
				t.Fatalf("%s: %q compiled to %q, which does not compile: %v", d, stmt, out, err)
			}
			if again != out || len(refs2) != len(refs) {
				t.Fatalf("%s: %q → %q (%d refs) → %q (%d refs)", d, stmt, out, len(refs), again, len(refs2))
			}
			for _, r := range refs2 {
				if r.name != "" {
					t.Fatalf("%s: %q: named ref %q left in %q", d, stmt, r.name, out)
				}
			}
		}
	})
}

// pgUncompiled turns the $1, $2, … of a statement compiled for PostgreSQL
// back into ?, reading it as compileStatement does.
func pgUncompiled(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(s); {
		j, _, err := skipQuoted(s, i, dialectPostgres)
		require.NoError(t, err, "%q", s)
		if j == i {
			j = pgNameEnd(s, i, dialectPostgres)
		}
		if j == i && s[i] == '$' {
			for j = i + 1; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
			}
			if j > i+1 {
				b.WriteByte('?')
				i = j
				continue
			}
			j = i
		}
		if j == i {
			j = i + 1
		}
		b.WriteString(s[i:j])
		i = j
	}
	return b.String()
}
