package namedsql

import "strings"

// MultiRow expands the VALUES tuple of an insert to n tuples, for a
// multi-row insert of n rows. Text after the tuple (an upsert's
// assignments, a RETURNING) is kept after the last one. A text without a
// VALUES tuple, or n < 2, is returned as it is.
func MultiRow(q string, n int) string {
	i := strings.Index(q, "VALUES")
	if i < 0 || n <= 1 {
		return q
	}
	open := strings.IndexByte(q[i:], '(')
	if open < 0 {
		return q
	}
	open += i
	end, depth, quoted := -1, 0, false
	for k := open; k < len(q) && end < 0; k++ {
		switch c := q[k]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				end = k + 1
			}
		}
	}
	if end < 0 {
		return q
	}
	tuple := q[open:end]
	var b strings.Builder
	b.WriteString(q[:i+len("VALUES")])
	b.WriteByte(' ')
	for k := 0; k < n; k++ {
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tuple)
	}
	b.WriteString(q[end:])
	return b.String()
}
