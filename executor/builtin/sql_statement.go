package builtin

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// dialect is how the database of a data source reads a statement: where its
// string literals, quoted identifiers and comments begin and end. The sql
// handler must read a statement exactly as the database does, or a ';' that
// it takes for part of a literal ends the statement in the database and
// what follows runs as a second one.
type dialect string

// The dialects, named like the drivers of DataSource.
const (
	// dialectMySQL is MySQL's and MariaDB's reading: '…' and "…" are
	// literals (or "…" an identifier under sql_mode ANSI_QUOTES) where a
	// doubled quote stands for itself and, unless sql_mode has
	// NO_BACKSLASH_ESCAPES, a backslash escapes the next character; `…`
	// is an identifier with no backslash escapes. Comments are /* … */,
	// # to the end of the line, and -- to the end of the line only when
	// a space or control character follows the two dashes. /*! … */ and
	// /*M! … */ are not comments to MySQL and MariaDB, which run their
	// text. The connection character set is assumed ASCII-compatible
	// for backslashes (utf8mb4, the driver's default; not big5, cp932,
	// gbk, gb18030 or sjis, where 0x5C can be the second byte of a
	// character).
	dialectMySQL dialect = "mysql"
	// dialectSQLite is SQLite's reading: '…' literals and "…", `…` and
	// […] identifiers, where a doubled quote stands for itself (not in
	// […]) and a backslash is an ordinary character; comments are
	// /* … */ and -- to the end of the line.
	dialectSQLite dialect = "sqlite"
	// dialectPostgres is PostgreSQL's reading with client_encoding UTF8 and
	// standard_conforming_strings on, which the handler makes sure of on
	// every connection before each statement (execPostgres): '…' literals
	// where a doubled quote stands for itself and a backslash is an
	// ordinary character; E'…' literals where a backslash also escapes the
	// next character (\' is a quote); $$…$$ and $tag$…$tag$ literals, the
	// tag a name without $, which end at the first $tag$ and have no
	// escapes; "…" identifiers where "" stands for a quote. A literal goes
	// on after its closing quote when white space holding a newline (and
	// maybe -- comments) and another quote follow ('a'<newline>'b' is 'ab'):
	// an E'…' literal goes on with its escapes. Comments are -- to the end
	// of the line (a \n or a \r) and /* … */, which nest: /* a /* b */ c */
	// is one comment. A name goes on through letters, digits, _, $ and
	// bytes from 0x80 (a$1 and e$$x are names, and the e of name'x' starts
	// no E'…' literal); $1, $2, … are PostgreSQL's own placeholders, which
	// the handler writes for ? and :name.
	dialectPostgres dialect = "postgres"
)

// textAfterStatementError is the error of a statement that goes on after a
// ';'.
type textAfterStatementError struct{ at int } // the ';', a byte offset

func (e *textAfterStatementError) Error() string { return e.Unwrap().Error() }

// Unwrap is the error as a problem of Problems.
func (e *textAfterStatementError) Unwrap() error {
	return newProblem("sql.text_after", nil, "at", e.at)
}

// compileStatement reads stmt the way d does, finds its placeholders — ?
// and :name — outside string literals, quoted identifiers and comments,
// turns every placeholder into the driver's (? for MySQL and SQLite, $1,
// $2, … in order for PostgreSQL), and refuses more than one statement (a
// ';' followed by anything but white space), a literal or comment that is
// not closed, and text the dialects of MySQL's sql_mode settings read
// differently. It never puts a value into the text: values are bound by
// the driver. Byte offsets in its errors count from the start of stmt.
func compileStatement(stmt string, d dialect) (string, []argRef, error) {
	if i := strings.IndexByte(stmt, 0); i >= 0 {
		return "", nil, newProblem("sql.nul", nil, "at", i)
	}
	var out strings.Builder
	var refs []argRef
	positional := 0
	code := false // whether anything but white space and comments was read
	for i := 0; i < len(stmt); {
		j, comment, err := skipQuoted(stmt, i, d)
		if err != nil {
			return "", nil, err
		}
		if j > i {
			out.WriteString(stmt[i:j])
			code = code || !comment
			i = j
			continue
		}
		if j := pgNameEnd(stmt, i, d); j > i {
			// A PostgreSQL name as a whole: a $ or quote in it starts
			// nothing.
			out.WriteString(stmt[i:j])
			code = true
			i = j
			continue
		}
		c := stmt[i]
		code = code || c != ';' && !isSpace(c)
		switch {
		case c == '?':
			if i+1 < len(stmt) && stmt[i+1] >= '0' && stmt[i+1] <= '9' {
				return "", nil, newProblem("sql.numbered", nil, "char", string(stmt[i+1]))
			}
			refs = append(refs, argRef{pos: positional})
			positional++
			writePlaceholder(&out, d, len(refs), stmt[i+1:])
			i++
		case c == ':' && i+1 < len(stmt) && isNameStart(stmt[i+1]) && (i == 0 || stmt[i-1] != ':'):
			j := i + 1
			for j < len(stmt) && isNameChar(stmt[j]) {
				j++
			}
			refs = append(refs, argRef{name: stmt[i+1 : j]})
			writePlaceholder(&out, d, len(refs), stmt[j:])
			i = j
		case c == '$' && d == dialectPostgres && i+1 < len(stmt) && stmt[i+1] >= '0' && stmt[i+1] <= '9':
			// PostgreSQL's own placeholder: the handler numbers the ? and
			// :name itself, and a $1 of the text would take the first
			// argument as well.
			return "", nil, newProblem("sql.dollar_numbered", nil, "at", i)
		case c == ';':
			if trimSpace(stmt[i+1:]) != "" {
				return "", nil, &textAfterStatementError{at: i}
			}
			if d == dialectMySQL && strings.HasSuffix(out.String(), "--") {
				// MySQL reads "--;" as two minus signs, but the statement
				// is sent without its ';', and a "--" at its end would be
				// a comment: the server would run something else.
				return "", nil, newProblem("sql.dash_semicolon", nil, "at", i)
			}
			i = len(stmt)
		default:
			out.WriteByte(c)
			i++
		}
	}
	compiled := trimSpace(out.String())
	if !code || compiled == "" {
		return "", nil, newProblem("sql.empty", nil)
	}
	return compiled, refs, nil
}

// writePlaceholder writes the n-th placeholder (from 1) of a statement of
// dialect d, followed in the statement by next: ? for MySQL and SQLite, $n
// for PostgreSQL, with a space on the side where a name or number touches
// it, which would take the $n in (a$1 is one name to PostgreSQL, and
// $1abc an error).
func writePlaceholder(out *strings.Builder, d dialect, n int, next string) {
	if d != dialectPostgres {
		out.WriteByte('?')
		return
	}
	if s := out.String(); s != "" && isPGNameChar(s[len(s)-1]) {
		out.WriteByte(' ')
	}
	out.WriteByte('$')
	out.WriteString(strconv.Itoa(n))
	if next != "" && isPGNameChar(next[0]) {
		out.WriteByte(' ')
	}
}

// skipQuoted returns the index just past the string literal, quoted
// identifier or comment that starts at s[i] in dialect d, or i when none
// starts there, and whether it is a comment. A -- or # comment ends before
// its newline.
func skipQuoted(s string, i int, d dialect) (end int, comment bool, err error) {
	if d == dialectPostgres {
		return pgSkipQuoted(s, i)
	}
	rest := s[i:]
	switch c := s[i]; {
	case c == '\'' || c == '"':
		if d == dialectMySQL {
			end, err = mysqlQuoteEnd(s, i)
		} else {
			end, err = quoteEnd(s, i, false)
		}
		return end, false, err
	case c == '`':
		end, err = quoteEnd(s, i, false)
		return end, false, err
	case c == '[' && d == dialectSQLite:
		j := strings.IndexByte(rest, ']')
		if j < 0 {
			return 0, false, newProblem("sql.bracket_open", nil, "at", i)
		}
		return i + j + 1, false, nil
	case strings.HasPrefix(rest, "--") && (d == dialectSQLite || len(rest) == 2 || rest[2] <= ' ' || rest[2] == 0x7f),
		c == '#' && d == dialectMySQL:
		if j := strings.IndexByte(rest, '\n'); j >= 0 {
			return i + j, true, nil
		}
		return len(s), true, nil
	case strings.HasPrefix(rest, "/*"):
		if d == dialectMySQL && (strings.HasPrefix(rest, "/*!") || strings.HasPrefix(rest, "/*M!")) {
			return 0, false, newProblem("sql.executable_comment", nil, "at", i)
		}
		j := strings.Index(rest[2:], "*/")
		if j < 0 {
			return 0, false, newProblem("sql.comment_open", nil, "at", i)
		}
		return i + 2 + j + 2, true, nil
	}
	return i, false, nil
}

// quoteEnd returns the index just past the quoted text that starts at s[i]
// and ends at the same quote character; a doubled quote stands for itself
// and, when backslash is set, a backslash escapes the next byte.
func quoteEnd(s string, i int, backslash bool) (int, error) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case backslash && s[j] == '\\':
			j++
		case s[j] == q:
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1, nil
		}
	}
	return 0, newProblem("sql.quote_open", nil, "quote", string(q), "at", i)
}

// mysqlQuoteEnd is quoteEnd for a MySQL '…' or "…", which ends where it ends
// with backslash escapes (MySQL's default) and without (sql_mode
// NO_BACKSLASH_ESCAPES; ANSI_QUOTES for "…" identifiers): the handler does
// not know the server's sql_mode, so a literal the two readings end at
// different places is refused.
func mysqlQuoteEnd(s string, i int) (int, error) {
	escaped, errE := quoteEnd(s, i, true)
	plain, errP := quoteEnd(s, i, false)
	switch {
	case errE != nil && errP != nil:
		return 0, errE
	case errE != nil || errP != nil || escaped != plain:
		return 0, newProblem("sql.backslash_literal", nil, "quote", string(s[i]), "at", i)
	}
	return escaped, nil
}

func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// trimSpace trims the white space the databases skip (isSpace) from both
// ends of s — not the other Unicode spaces, such as U+0085, which they read
// as part of the statement: trimming those could leave a statement that is
// only a comment.
func trimSpace(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r < utf8.RuneSelf && isSpace(byte(r)) })
}
func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameChar(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }

// pgSkipQuoted is skipQuoted for PostgreSQL (dialectPostgres). s[i] starts
// a token: compileStatement reads a name as a whole (pgNameEnd), so that
// the e of name'x' or the $ of a$$ is not taken for the start of a literal.
func pgSkipQuoted(s string, i int) (end int, comment bool, err error) {
	rest := s[i:]
	switch c := s[i]; {
	case c == '\'':
		end, err = pgLiteralEnd(s, i, i+1, false)
		return end, false, err
	case (c == 'e' || c == 'E') && len(rest) > 1 && rest[1] == '\'':
		end, err = pgLiteralEnd(s, i, i+2, true)
		return end, false, err
	case c == '"':
		end, err = quoteEnd(s, i, false)
		return end, false, err
	case c == '$':
		tag := pgDollarTag(rest)
		if tag == "" {
			return i, false, nil // a $ of its own, or PostgreSQL's $1
		}
		j := strings.Index(rest[len(tag):], tag)
		if j < 0 {
			return 0, false, newProblem("sql.quote_open", nil, "quote", tag, "at", i)
		}
		return i + len(tag) + j + len(tag), false, nil
	case strings.HasPrefix(rest, "--"):
		if j := strings.IndexAny(rest, "\n\r"); j >= 0 {
			return i + j, true, nil
		}
		return len(s), true, nil
	case strings.HasPrefix(rest, "/*"):
		depth := 0
		for j := i + 2; j+1 < len(s); j++ {
			switch {
			case s[j] == '/' && s[j+1] == '*':
				depth++
				j++
			case s[j] == '*' && s[j+1] == '/':
				if depth == 0 {
					return j + 2, true, nil
				}
				depth--
				j++
			}
		}
		return 0, false, newProblem("sql.comment_open", nil, "at", i)
	}
	return i, false, nil
}

// pgLiteralEnd returns the index just past the PostgreSQL '…' literal (E'…'
// when escapes is set) that starts at s[start] with its text at s[j]. A
// doubled quote stands for itself; with escapes a backslash escapes the
// next byte. The literal goes on, with the same escapes, where its closing
// quote is followed by white space holding a newline and another quote
// (pgContinuation).
func pgLiteralEnd(s string, start, j int, escapes bool) (int, error) {
	for ; j < len(s); j++ {
		switch {
		case escapes && s[j] == '\\':
			j++
		case s[j] == '\'':
			if j+1 < len(s) && s[j+1] == '\'' {
				j++
				continue
			}
			next := pgContinuation(s, j+1)
			if next < 0 {
				return j + 1, nil
			}
			j = next
		}
	}
	quote := "'"
	if s[start] != '\'' {
		quote = s[start:start+1] + "'"
	}
	return 0, newProblem("sql.quote_open", nil, "quote", quote, "at", start)
}

// pgContinuation returns the index of the quote that continues a
// PostgreSQL literal whose closing quote is right before s[i], or -1: the
// literal goes on when only spaces, tabs, form feeds, newlines (\n or \r)
// and -- comments stand before the next quote, and at least one newline
// (the end of a comment counts).
func pgContinuation(s string, i int) int {
	newline := false
	for i < len(s) {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\f':
			i++
		case c == '\n' || c == '\r':
			newline = true
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			j := strings.IndexAny(s[i:], "\n\r")
			if j < 0 {
				return -1
			}
			i += j
		case c == '\'' && newline:
			return i
		default:
			return -1
		}
	}
	return -1
}

// pgDollarTag returns the $$ or $tag$ that s starts with, or "" when it
// starts with none: the tag is a letter, _ or byte from 0x80, then those
// and digits (not $).
func pgDollarTag(s string) string {
	if len(s) < 2 || s[0] != '$' {
		return ""
	}
	j := 1
	if isPGNameStart(s[1]) {
		j = 2
		for j < len(s) && s[j] != '$' && isPGNameChar(s[j]) {
			j++
		}
	}
	if j < len(s) && s[j] == '$' {
		return s[:j+1]
	}
	return ""
}

// pgNameEnd returns the index just past the PostgreSQL name (identifier or
// keyword) that starts at s[i] in dialect d, or i when none starts there or
// d is not PostgreSQL.
func pgNameEnd(s string, i int, d dialect) int {
	if d != dialectPostgres || !isPGNameStart(s[i]) {
		return i
	}
	j := i + 1
	for j < len(s) && isPGNameChar(s[j]) {
		j++
	}
	return j
}

// isPGNameStart and isPGNameChar are the bytes PostgreSQL starts and goes
// on with a name: every byte from 0x80 is part of a character outside
// ASCII, which PostgreSQL takes for a letter.
func isPGNameStart(c byte) bool { return isNameStart(c) || c >= 0x80 }
func isPGNameChar(c byte) bool  { return isPGNameStart(c) || c >= '0' && c <= '9' || c == '$' }
