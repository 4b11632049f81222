package namedsql

import (
	"strconv"
	"strings"
)

// Placeholders returns q with each of its "?" placeholders replaced by what
// write writes for it (i counts them from 0), and how many there were. It
// leaves alone the "?" in string literals ('…', with ” inside), quoted
// names ("…"), line comments (-- …) and block comments (/* … */). The
// first error of write stops it.
func Placeholders(q string, write func(b *strings.Builder, i int) error) (string, int, error) {
	if !strings.Contains(q, "?") {
		return q, 0, nil
	}
	var b strings.Builder
	b.Grow(len(q) + 32)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			end := i + 1
			for end < len(q) && q[end] != c {
				end++
			}
			b.WriteString(q[i:min(end+1, len(q))])
			i = end
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			end := strings.IndexByte(q[i:], '\n')
			if end < 0 {
				end = len(q) - i
			}
			b.WriteString(q[i : i+end])
			i += end - 1
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				b.WriteString(q[i:])
				return b.String(), n, nil
			}
			b.WriteString(q[i : i+2+end+2])
			i += 2 + end + 1
		case c == '?':
			if err := write(&b, n); err != nil {
				return "", n, err
			}
			n++
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), n, nil
}

// Dollar numbers the "?" placeholders of q as PostgreSQL's $1, $2, …
// (see Placeholders for those it leaves alone): the queries of every
// dialect are written with "?", and a PostgreSQL driver (pgx, lib/pq)
// takes numbered ones.
func Dollar(q string) string {
	out, _, _ := Placeholders(q, func(b *strings.Builder, i int) error {
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(i + 1))
		return nil
	})
	return out
}
