package builtin

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// pgTestConn is a connection of the protocol level to a new database of the
// test server (testenv.Postgres), to ask the server how it reads a text.
func pgTestConn(tb testing.TB) *pgconn.PgConn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pc, err := pgconn.Connect(ctx, testenv.Postgres(tb))
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = pc.Close(context.Background()) }) // before testenv drops the database
	require.Equal(tb, "on", pc.ParameterStatus("standard_conforming_strings"))
	require.Equal(tb, "UTF8", pc.ParameterStatus("client_encoding"))
	return pc
}

// pgCorpus are statements of PostgreSQL, each one or more SELECTs of
// literals, where a reading that is wrong about a literal, identifier or
// comment ends a statement at another place than the server (or at none).
var pgCorpus = []string{
	// standard strings: '' is a quote, a backslash is a character
	"SELECT 'a;b'", "SELECT 'it''s; ok'", `SELECT 'C:\'; SELECT 2`, `SELECT 'a\'' ; SELECT 2; --'`,
	`SELECT '\'`, "SELECT '--;' AS a, '/*;' AS b", "SELECT ''''; SELECT ';'",
	// E'…': backslash escapes, '' too
	`SELECT E'a\'; b'`, `SELECT E'a\\'; SELECT 2`, `SELECT e'\\\''`, `SELECT E'\x3b;'`, `SELECT E'a''\';'`,
	`SELECT E'\\' AS x; SELECT E'\''`,
	// the e of a name starts no E'…'
	`SELECT name'\'; SELECT 2`, `SELECT name'\'' ; SELECT 2; --'`, `SELECT time'12:00'`, `SELECT 1 AS e, 'x' AS ee`,
	// continued literals: a newline (\n or \r, maybe -- comments) and a quote
	"SELECT 'a'\n'b;c'", "SELECT 'a' -- x;'\n'b;c'", "SELECT 'a'\r'\\'; SELECT 2",
	"SELECT E'a'\n'\\''; SELECT 2; --'", "SELECT E'a'\r\n'\\';x'", "SELECT E'a' -- c;\n\t'\\';x'",
	"SELECT E'a'\n-- c\n'\\';'",
	// dollar quotes and the $ of names
	"SELECT $$;$$", "SELECT $a$ $$ ; $a$", "SELECT $a$;$b$;$a$", "SELECT $a_1$;$a$$a_1$", "SELECT $é$;$é$",
	"SELECT $$it's$$ || $$;$$", "SELECT $a$x$a$||$b$;$b$", "SELECT 1 AS x$$; SELECT 2",
	"SELECT 1 AS x$$, $$;$$ AS y", "SELECT 1 AS a$1", "SELECT 1 AS é$$, $$é;$$",
	"SELECT 1 AS \"$$\", $$;$$", "SELECT $_$';$_$",
	// quoted identifiers
	"SELECT 1 AS \"a;b\"", "SELECT 1 AS \"a\"\";\"", "SELECT 1 AS \"'\"; SELECT ';'", "SELECT 1 AS U&\"a;\"",
	// comments: -- ends at \n or \r, /* */ nest, and start inside operators
	"SELECT 1 -- ;\n", "SELECT 1 -- x\r; SELECT 2", "SELECT 1 --\n; SELECT 2", "SELECT 1 /* ; */",
	"SELECT 1 /* /* ; */ ; */", "SELECT 1 /* a */; SELECT 2 /* ; */", "SELECT 1 /*/ ; */ ;", "SELECT 1 /**/; SELECT 2",
	"SELECT 2 */* ; */ 3", "SELECT 1 +-- ;\n 2", "SELECT 1 -/* ; */2", "SELECT 1 /* ' */; SELECT '/*'",
	"SELECT 1 /* $$ */; SELECT 2", "SELECT 1 -- $$\n; SELECT $$ -- $$",
	// other literals
	"SELECT B'01'", "SELECT X'3b'", "SELECT N'a;b'", "SELECT U&'a;\\0041'", "SELECT B'0'\n'1'; SELECT 2",
	// numbers, casts, slices, white space
	"SELECT 1.5e3, '1'::int, (ARRAY[1,2,3])[1:2]", "SELECT\f1;\n\t ", "SELECT 1;", "SELECT 'é;' AS \"ü;\"",
}

// pgRows is a result as text.
func pgRows(r *pgconn.Result) [][]string {
	rows := make([][]string, 0, len(r.Rows))
	for _, row := range r.Rows {
		vals := make([]string, len(row))
		for i, v := range row {
			vals[i] = string(v)
		}
		rows = append(rows, vals)
	}
	return rows
}

// pgExtended runs stmt over the extended protocol, which takes one
// statement only, and returns its result.
func pgExtended(t *testing.T, ctx context.Context, pc *pgconn.PgConn, stmt string) *pgconn.Result {
	t.Helper()
	r := pc.ExecParams(ctx, stmt, nil, nil, nil, nil).Read()
	require.NoError(t, r.Err, "%q over the extended protocol", stmt)
	return r
}

// checkPostgresReading holds compileStatement's reading of text, which holds
// no placeholder, to the server's. The server runs text over the simple
// protocol, which runs each of its statements and returns a result for
// each. Where compileStatement takes text for one statement, so must the
// server, and the statement it compiled (run over the extended protocol,
// where the server parses one statement only) must return what the server's
// returned; where compileStatement ends the first statement at a ';' and
// finds text after it, the server must run more than one statement, the
// first of which returns what the text up to that ';', compiled, returns.
// A statement that compileStatement refuses otherwise, the server must
// refuse too.
func checkPostgresReading(t *testing.T, ctx context.Context, pc *pgconn.PgConn, text string) {
	t.Helper()
	results, serverErr := pc.Exec(ctx, text).ReadAll()
	compiled, refs, err := compileStatement(text, dialectPostgres)
	var after *textAfterStatementError
	switch {
	case err == nil:
		require.NoError(t, serverErr, "%q: one statement to compileStatement, the server refuses it", text)
		require.Len(t, results, 1, "%q: one statement to compileStatement, the server runs %d", text, len(results))
		require.Empty(t, refs, "%q: compileStatement finds placeholders where the server sees none", text)
		r := pgExtended(t, ctx, pc, compiled)
		require.Equal(t, results[0].CommandTag.String(), r.CommandTag.String(), "%q", text)
		require.Equal(t, pgRows(results[0]), pgRows(r), "%q compiled to %q", text, compiled)
	case errors.As(err, &after):
		require.NoError(t, serverErr, "%q: compileStatement ends a first statement at byte %d, the server refuses the text", text, after.at)
		require.Greater(t, len(results), 1, "%q: compileStatement ends a first statement at the ';' at byte %d, the server runs one statement", text, after.at)
		first, refs, err := compileStatement(text[:after.at+1], dialectPostgres)
		require.NoError(t, err, "%q", text[:after.at+1])
		require.Empty(t, refs, "%q", text)
		r := pgExtended(t, ctx, pc, first)
		require.Equal(t, pgRows(results[0]), pgRows(r), "%q: the first statement, %q to compileStatement", text, first)
	default:
		require.Error(t, serverErr, "%q: compileStatement refuses it (%v), the server runs it", text, err)
	}
}

// TestPostgresReaderAgreesWithServer holds compileStatement's PostgreSQL
// reading to the server's (checkPostgresReading) over pgCorpus and over
// random statements of every kind of literal, quoted identifier and
// comment, with the characters that end or start them inside.
func TestPostgresReaderAgreesWithServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pc := pgTestConn(t)
	for _, text := range pgCorpus {
		checkPostgresReading(t, ctx, pc, text)
	}
	r := rand.New(rand.NewPCG(2026, 15))
	one, more := 0, 0
	for range 500 {
		text := pgRandomText(r)
		checkPostgresReading(t, ctx, pc, text)
		if _, _, err := compileStatement(text, dialectPostgres); err == nil {
			one++
		} else {
			more++
		}
	}
	t.Logf("%d statements of the corpus and 500 random ones (%d of one statement, %d of two) read as the server reads them", len(pgCorpus), one, more)
	require.Positive(t, one)
	require.Positive(t, more)
}

// TestPostgresPlaceholders: the $1, $2, … that compileStatement writes for
// ? and :name are the server's placeholders, bound in order, also where a
// name or a literal touches them.
func TestPostgresPlaceholders(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pc := pgTestConn(t)
	named := map[string]string{"a": "A", "b": "B", "n": "2"}
	for _, c := range []struct {
		stmt string
		args []string // for the ? in order
		want string
	}{
		{"SELECT CASE WHEN true THEN?ELSE'no'END", []string{"yes"}, "yes"},
		{"SELECT 1 WHERE 1=?AND 2=:n::int", []string{"1"}, "1"},
		{"SELECT :a||?||:b::text", []string{"-"}, "A-B"},
		{"SELECT $$?$$||?||E'?\\''||:a||'?'||$x$:b$x$ -- ?", []string{"1"}, "?1?'A?:b"},
		{"SELECT (ARRAY['x','y','z'])[?::int:?::int]::text", []string{"2", "3"}, "{y,z}"},
		{"SELECT ?::int+1, :a /* ? */", []string{"41"}, "42"},
	} {
		compiled, refs, err := compileStatement(c.stmt, dialectPostgres)
		require.NoError(t, err, c.stmt)
		var vals [][]byte
		for _, r := range refs {
			if r.name != "" {
				vals = append(vals, []byte(named[r.name]))
				continue
			}
			vals = append(vals, []byte(c.args[r.pos]))
		}
		res := pc.ExecParams(ctx, compiled, vals, nil, nil, nil).Read()
		require.NoError(t, res.Err, "%q compiled to %q", c.stmt, compiled)
		got := ""
		if len(res.Rows) > 0 {
			got = string(res.Rows[0][0])
		}
		require.Equal(t, c.want, got, "%q compiled to %q", c.stmt, compiled)
	}
}

// pgPieces are what the texts of pgRandomText's literals, identifiers and
// comments are made of: the characters and sequences that end or start
// them in some reading.
var pgPieces = []string{
	"a", ";", "'", "''", `"`, `\`, `\'`, "$", "$$", "$a$", "-", "--", "/*", "*/", "*", "/", "\n", "\r", " ", "\t",
	"e", "E'", "?", ":x", "é", "U&", "x",
}

func pgRandomContent(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(7) {
		b.WriteString(pgPieces[r.IntN(len(pgPieces))])
	}
	return b.String()
}

// pgStandard and pgEscaped write s as a '…' and an E'…' literal's text.
func pgStandard(s string) string { return strings.ReplaceAll(s, "'", "''") }

func pgEscaped(r *rand.Rand, s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\'' && r.IntN(2) == 0:
			b.WriteString(`\'`)
		case c == '\'':
			b.WriteString("''")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// pgContinuations go between the parts of a literal that goes on.
var pgContinuations = []string{"\n", " \n ", "\r", "\r\n", " -- c ' ; $$ \n", "\n-- c /*\n\t", "\f\n"}

// pgRandomLiteral is a literal of one of the kinds PostgreSQL has, with a
// random text.
func pgRandomLiteral(r *rand.Rand) string {
	s := pgRandomContent(r)
	switch r.IntN(8) {
	case 0:
		return "E'" + pgEscaped(r, s) + "'"
	case 1:
		delim := []string{"$$", "$a$", "$t_1$", "$é$"}[r.IntN(4)]
		if strings.Index(s+delim, delim) == len(s) {
			return delim + s + delim
		}
		return "'" + pgStandard(s) + "'"
	case 2:
		sep := pgContinuations[r.IntN(len(pgContinuations))]
		return "'" + pgStandard(s) + "'" + sep + "'" + pgStandard(pgRandomContent(r)) + "'"
	case 3:
		sep := pgContinuations[r.IntN(len(pgContinuations))]
		return "E'" + pgEscaped(r, s) + "'" + sep + "'" + pgEscaped(r, pgRandomContent(r)) + "'"
	case 4:
		return "U&'" + pgStandard(strings.ReplaceAll(s, `\`, `\\`)) + "'"
	case 5:
		return "name'" + pgStandard(s) + "'"
	default:
		return "'" + pgStandard(s) + "'"
	}
}

// pgRandomAlias is a column name: plain, with $ in it, or quoted.
func pgRandomAlias(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return "x$$"
	case 1:
		return "a$1"
	case 2:
		s := pgRandomContent(r)
		if s == "" {
			s = ";"
		}
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	default:
		return "c"
	}
}

// pgRandomGap is white space or a comment between two tokens.
func pgRandomGap(r *rand.Rand) string {
	switch r.IntN(6) {
	case 0:
		return ""
	case 1:
		return "\n"
	case 2:
		return " -- " + strings.NewReplacer("\n", "", "\r", "").Replace(pgRandomContent(r)) + []string{"\n", "\r"}[r.IntN(2)]
	case 3:
		c := strings.NewReplacer("/*", "", "*/", "", "/", "", "*", "").Replace(pgRandomContent(r))
		if r.IntN(2) == 0 {
			c += "/* " + c + " */"
		}
		return " /*" + c + "*/ "
	default:
		return " "
	}
}

// pgRandomText is one or two SELECTs of random literals and column names,
// with random gaps.
func pgRandomText(r *rand.Rand) string {
	var b strings.Builder
	for k := range 1 + r.IntN(2) {
		if k > 0 {
			b.WriteString(";" + pgRandomGap(r))
		}
		b.WriteString("SELECT ")
		for c := range 1 + r.IntN(3) {
			if c > 0 {
				b.WriteString(pgRandomGap(r) + "," + pgRandomGap(r))
			}
			b.WriteString(pgRandomLiteral(r) + " AS " + pgRandomAlias(r))
		}
		b.WriteString(pgRandomGap(r))
	}
	if r.IntN(2) == 0 {
		b.WriteString(";")
	}
	return b.String()
}

// FuzzPostgresStatement holds compileStatement's PostgreSQL reading to the
// server's parser, which it asks to parse (never to run) a text over the
// extended protocol: a statement compileStatement accepts is, compiled, no
// text of several statements to the server, and when the server parses it,
// it finds as many placeholders ($1, $2, …) as compileStatement wrote; a
// text that compileStatement ends at a ';' with more after it does not
// parse as one statement (but CREATE FUNCTION … BEGIN ATOMIC, whose body
// compileStatement refuses, and a text with an empty statement before or
// after that ';', which the server skips and compileStatement refuses).
func FuzzPostgresStatement(f *testing.F) {
	for _, s := range pgCorpus {
		f.Add(s)
	}
	for _, s := range []string{
		"UPDATE item SET note = ? WHERE id = :slot", "SELECT a?, ?b, x:y, 1?", "SELECT ?$$ $$", "SELECT $ ?",
		"SELECT 1; ;", ";", "/*", "SELECT $1", "SELECT E'\\", "SELECT 'a'\v'b'",
		"CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END",
	} {
		f.Add(s)
	}
	pc := pgTestConn(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, stmt string) {
		compiled, refs, err := compileStatement(stmt, dialectPostgres)
		if err == nil {
			sd, err := pc.Prepare(ctx, "", compiled, nil)
			var pe *pgconn.PgError
			if errors.As(err, &pe) && strings.Contains(pe.Message, "multiple commands") {
				t.Fatalf("%q compiled to %q: one statement to compileStatement, several to the server: %v", stmt, compiled, err)
			}
			if err == nil && len(sd.ParamOIDs) != len(refs) {
				t.Fatalf("%q compiled to %q: %d placeholders to compileStatement, %d to the server", stmt, compiled, len(refs), len(sd.ParamOIDs))
			}
			return
		}
		var after *textAfterStatementError
		if !errors.As(err, &after) || strings.Contains(strings.ToLower(stmt), "atomic") ||
			pgNothing(stmt[:after.at]) || pgNothing(stmt[after.at+1:]) {
			return // refusing is safe
		}
		if _, err := pc.Prepare(ctx, "", stmt, nil); err == nil {
			t.Fatalf("%q: compileStatement ends a statement at the ';' at byte %d, the server parses one statement", stmt, after.at)
		}
	})
}

// TestPostgresExecGuards: whatever text reaches a PostgreSQL data source,
// even past compileStatement, runs as one statement or not at all; a
// statement runs in a session that reads it as compileStatement did, even
// after a job changed the session; COPY … FROM STDIN, which would wait for
// data until the timeout, is refused; and a statement that leaves a
// transaction open is refused and rolled back.
func TestPostgresExecGuards(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn := testenv.Postgres(t)
	s, err := NewSQL(SQLConfig{DataSources: map[string]DataSource{"biz": {Driver: "postgres", DSN: dsn}}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	s.dbs["biz"].SetMaxOpenConns(1) // every statement on the one connection
	require.NoError(t, s.dbs["biz"].PingContext(ctx))
	check, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = check.Close() })
	notes := func() []string {
		t.Helper()
		rows, err := check.QueryContext(ctx, "SELECT note FROM item ORDER BY id")
		require.NoError(t, err)
		defer rows.Close()
		var got []string
		for rows.Next() {
			var n string
			require.NoError(t, rows.Scan(&n))
			got = append(got, n)
		}
		require.NoError(t, rows.Err())
		return got
	}

	_, err = s.exec(ctx, "biz", "CREATE TABLE item (id SERIAL PRIMARY KEY, note TEXT)", nil)
	require.NoError(t, err)
	for stmt, args := range map[string][]any{
		"INSERT INTO item (note) VALUES ('a'); DROP TABLE item": nil,
		"INSERT INTO item (note) VALUES ($1); DROP TABLE item":  {"a"},
	} {
		_, err = s.exec(ctx, "biz", stmt, args)
		require.ErrorContains(t, err, "cannot insert multiple commands into a prepared statement", stmt)
		require.True(t, permanentSQLError(err), stmt)
	}
	require.Empty(t, notes(), "not even the first statement ran, and the table is there")

	// A job's SET does not change how the next job's statement is read.
	for _, stmt := range []string{"SET standard_conforming_strings = off", "SET client_encoding = 'LATIN1'"} {
		_, err = s.exec(ctx, "biz", stmt, nil)
		require.NoError(t, err, stmt)
		_, err = s.exec(ctx, "biz", `INSERT INTO item (note) VALUES ('C:\é')`, nil)
		require.NoError(t, err, "after %s", stmt)
	}
	require.Equal(t, []string{`C:\é`, `C:\é`}, notes())

	for _, stmt := range []string{"COPY item (note) FROM STDIN", "/* load */ copy item from stdin with (format csv)"} {
		_, err = s.exec(ctx, "biz", stmt, nil)
		require.ErrorIs(t, err, ErrRefused, stmt)
		require.ErrorContains(t, err, "COPY … FROM STDIN: the sql handler sends no data to copy", stmt)
	}
	for _, stmt := range []string{"COPY item TO STDOUT", "SELECT 1 AS stdin", "COPY (SELECT 'stdin') TO STDOUT", `COPY item FROM '/nonexistent/"stdin"'`} {
		require.False(t, pgCopyFromStdin(stmt), stmt)
	}

	_, err = s.exec(ctx, "biz", "BEGIN", nil)
	require.ErrorIs(t, err, ErrRefused)
	require.ErrorContains(t, err, "the statement left a transaction open (BEGIN, START TRANSACTION)")
	_, err = s.exec(ctx, "biz", "INSERT INTO item (note) VALUES ('after')", nil)
	require.NoError(t, err)
	require.Equal(t, []string{`C:\é`, `C:\é`, "after"}, notes(), "the insert was committed, in no transaction left open")
}

// pgNothing reports whether s holds only white space, comments and ';' to
// compileStatement's PostgreSQL reading: empty statements.
func pgNothing(s string) bool {
	for i := 0; i < len(s); {
		j, comment, err := skipQuoted(s, i, dialectPostgres)
		switch {
		case err != nil || j > i && !comment:
			return false
		case j > i:
			i = j
		case s[i] == ';' || isSpace(s[i]):
			i++
		default:
			return false
		}
	}
	return true
}
