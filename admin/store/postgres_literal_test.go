package store

import (
	"context"
	"database/sql/driver"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// checked runs values through the connection's CheckNamedValue, as
// database/sql does before ExecContext.
func checked(t testing.TB, values ...any) []driver.NamedValue {
	t.Helper()
	var c pgConn
	out := make([]driver.NamedValue, len(values))
	for i, v := range values {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
		require.NoError(t, c.CheckNamedValue(&out[i]))
	}
	return out
}

type status string

func TestInterpolateWritesLiteralsWherePlaceholdersStand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		q    string
		args []any
		want string
	}{
		{"SELECT ?", []any{int64(7)}, "SELECT 7"},
		{"SELECT a - ?", []any{-3}, "SELECT a - (-3)"},
		{"SELECT ?", []any{0.3}, "SELECT (0.3::double precision)"},
		{"SELECT ?, ?", []any{true, false}, "SELECT 1, 0"},
		{"SELECT ?", []any{nil}, "SELECT NULL"},
		{"SELECT ?", []any{"it's"}, "SELECT 'it''s'"},
		{"SELECT ?", []any{status("ok")}, "SELECT 'ok'"},
		{"SELECT ?", []any{[]byte(`{"a":1}`)}, `SELECT '{"a":1}'`},
		{"SELECT ?", []any{time.Date(2026, 12, 6, 1, 2, 3, 0, time.UTC)}, "SELECT '2026-12-06 01:02:03Z'"},
		// Placeholders in literals, quoted names and comments stay.
		{"SELECT '?', \"a?\", ? -- ?\n, ? /* ? */", []any{1, 2}, "SELECT '?', \"a?\", 1 -- ?\n, 2 /* ? */"},
		{"SELECT 'it''s ?', ?", []any{1}, "SELECT 'it''s ?', 1"},
	} {
		got, err := interpolate(c.q, checked(t, c.args...))
		require.NoError(t, err, c.q)
		require.Equal(t, c.want, got, c.q)
	}
}

func TestInterpolateRefusesWhatItCannotWrite(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		q    string
		args []any
		want string
	}{
		{"SELECT ?, ?", []any{1}, "more placeholders than its 1 arguments"},
		{"SELECT ?", []any{1, 2}, "1 placeholders for 2 arguments"},
		{"SELECT ?", []any{"a\x00b"}, "NUL byte"},
		{"SELECT ?", []any{math.NaN()}, "not a number"},
		{"SELECT ?", []any{math.Inf(1)}, "not a number"},
	} {
		_, err := interpolate(c.q, checked(t, c.args...))
		require.ErrorContains(t, err, c.want, c.q)
	}
}

// literalIn reads back the one string literal of q (as PostgreSQL does with
// standard_conforming_strings) and what stands outside it.
func literalIn(q string) (text, outside string, ok bool) {
	start := strings.IndexByte(q, '\'')
	if start < 0 {
		return "", q, false
	}
	var b strings.Builder
	for i := start + 1; i < len(q); i++ {
		if q[i] != '\'' {
			b.WriteByte(q[i])
			continue
		}
		if i+1 < len(q) && q[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), q[:start] + q[i+1:], true
	}
	return "", q, false
}

// FuzzInterpolateKeepsTextInsideItsLiteral: whatever the text, it comes
// back whole from the one literal interpolate writes, and nothing of it
// stands outside (no way out of the literal).
func FuzzInterpolateKeepsTextInsideItsLiteral(f *testing.F) {
	for _, s := range []string{"", "'", "''", "\\'", "'; DROP TABLE leader; --", "$$", "E'\\x00'", "/*", "?", "é'ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return
		}
		q, err := interpolate("SELECT ? AS x", checked(t, s))
		require.NoError(t, err)
		text, outside, ok := literalIn(q)
		require.True(t, ok, q)
		require.Equal(t, s, text)
		require.Equal(t, "SELECT  AS x", outside)
	})
}

// TestPostgresGetsBackEveryTextAsItWasSent sends awkward and random texts
// through a real PostgreSQL: each comes back unchanged, and the one that
// tries to end its literal and drop a table drops nothing.
func TestPostgresGetsBackEveryTextAsItWasSent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, Config{Driver: sqlfiles.Postgres, DSN: testenv.Postgres(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	_, err = s.Migrate(ctx)
	require.NoError(t, err)

	texts := []string{"", "'", "''", "\\", "\\'", "'; DROP TABLE leader; --", "$$ $tag$", "E'\\n'", "/* ? */", "?", "-- x\n?",
		"é'ü 中文 🙂", strings.Repeat("'", 1000)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]rune, r.IntN(40))
		for i := range b {
			switch r.IntN(4) {
			case 0:
				b[i] = rune("'\\\"$?-/*;\n\t"[r.IntN(11)])
			case 1:
				b[i] = rune(0x20 + r.IntN(0x5f))
			default:
				b[i] = rune(1 + r.IntN(0x2FFFF))
			}
			if !utf8.ValidRune(b[i]) {
				b[i] = 'x'
			}
		}
		texts = append(texts, string(b))
	}
	for _, text := range texts {
		var got string
		require.NoError(t, s.db.GetContext(ctx, &got, "SELECT ?", text))
		require.Equal(t, text, got)
		var n int
		require.NoError(t, s.db.GetContext(ctx, &n, "SELECT COUNT(*) FROM leader WHERE holder <> ? OR holder = ?", text, text))
		require.Equal(t, 1, n, "the leader row is still there")
	}
	for _, v := range []any{int64(math.MaxInt64), int64(math.MinInt64), 0.1, -2.5e-300, 1e300} {
		var got any
		require.NoError(t, s.db.QueryRowContext(ctx, "SELECT ?", v).Scan(&got))
		require.EqualValues(t, v, got)
	}
}
