package namedsql

import (
	"fmt"
	"slices"
	"strings"
)

// Query is one "-- name:" block of a file, or one "-- fragment:" block.
type Query struct {
	Name     string // the name before the dot
	Dialect  string // after the dot; "" when the text serves every dialect
	Text     string // comment lines dropped, trimmed, without the final ";"
	Line     int    // of the "-- name:" line, from 1
	Fragment bool   // a "-- fragment:" block: a piece of the queries, not one

	// Typing (see package gen): the ":kind" after the name, and the
	// "-- in:" and "-- out:" lines of the block, as written; "" if absent.
	Kind, In, Out string
}

// Comment lines of a block that type its query (see package gen).
const (
	inPrefix  = "-- in:"
	outPrefix = "-- out:"
)

// namePrefix starts the line that names a query.
const namePrefix = "-- name:"

// Parse reads the named queries of text, in file order. A name must be an
// identifier (letters, digits, '_', not starting with a digit), with an
// optional ".dialect" made the same way; a block defined twice or with no
// SQL is an error. A fragment is named the same way ("-- fragment:"), and
// shares the names of the queries.
func Parse(text string) ([]Query, error) {
	var out []Query
	seen := map[string]int{}
	var cur *Query
	var body strings.Builder
	flush := func() error {
		if cur == nil {
			return nil
		}
		cur.Text = strings.TrimSuffix(strings.TrimSpace(body.String()), ";")
		body.Reset()
		if strings.TrimSpace(cur.Text) == "" {
			return fmt.Errorf("line %d: %s %s has no SQL", cur.Line, cur.kind(), cur.full())
		}
		out = append(out, *cur)
		return nil
	}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r") // "\r\r\n" too: a body line never ends in "\r"
		trim := strings.TrimSpace(line)
		rest, isName := strings.CutPrefix(trim, namePrefix)
		isFragment := false
		if !isName {
			rest, isFragment = strings.CutPrefix(trim, fragmentPrefix)
		}
		if isName || isFragment {
			if err := flush(); err != nil {
				return nil, err
			}
			q := Query{Line: i + 1, Fragment: isFragment}
			rest = strings.TrimSpace(rest)
			if name, kind, typed := strings.Cut(rest, " "); typed && !isFragment {
				rest, q.Kind = name, strings.TrimSpace(kind)
				if !strings.HasPrefix(q.Kind, ":") || !identifier(q.Kind[1:]) {
					return nil, fmt.Errorf("line %d: %q after the name is not a kind (:exec, :one, …)", q.Line, q.Kind)
				}
				q.Kind = q.Kind[1:]
			}
			var dotted bool
			q.Name, q.Dialect, dotted = strings.Cut(rest, ".")
			full := q.full()
			if !identifier(q.Name) || dotted && !identifier(q.Dialect) {
				return nil, fmt.Errorf("line %d: %q is not a %s name (Name or Name.dialect)", q.Line, strings.TrimSpace(rest), q.kind())
			}
			if prev, dup := seen[full]; dup {
				return nil, fmt.Errorf("line %d: %s %s defined twice (first on line %d)", q.Line, q.kind(), full, prev)
			}
			seen[full] = q.Line
			cur = &q
			continue
		}
		if cur == nil {
			continue
		}
		for _, a := range []struct {
			prefix string
			to     *string
		}{{inPrefix, &cur.In}, {outPrefix, &cur.Out}} {
			if v, ok := strings.CutPrefix(trim, a.prefix); ok {
				if *a.to != "" {
					return nil, fmt.Errorf("line %d: %s of %s given twice", i+1, strings.TrimSuffix(a.prefix, ":"), cur.full())
				}
				if cur.Fragment {
					return nil, fmt.Errorf("line %d: fragment %s cannot be typed", i+1, cur.full())
				}
				*a.to = strings.TrimSpace(v)
			}
		}
		if strings.HasPrefix(trim, "--") {
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

func (q Query) kind() string {
	if q.Fragment {
		return "fragment"
	}
	return "query"
}

func (q Query) full() string {
	if q.Dialect == "" {
		return q.Name
	}
	return q.Name + "." + q.Dialect
}

func identifier(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// ForDialect returns the text of each name of qs for dialect: a block of
// that dialect wins over the shared one, blocks of the other dialects are
// left out, and the fragments are replaced (see package doc). A block of a
// dialect not in dialects is an error, and so is a name with no text for
// dialect.
func ForDialect(qs []Query, dialect string, dialects []string) (map[string]string, error) {
	if !slices.Contains(dialects, dialect) {
		return nil, fmt.Errorf("unknown dialect %q", dialect)
	}
	texts, frags := map[string]string{}, map[string]string{}
	var order []string // fragment names, in file order
	for _, q := range qs {
		out := texts
		if q.Fragment {
			out = frags
			if !slices.Contains(order, q.Name) {
				order = append(order, q.Name)
			}
		}
		switch {
		case q.Dialect != "" && !slices.Contains(dialects, q.Dialect):
			return nil, fmt.Errorf("line %d: %s %s: unknown dialect %q", q.Line, q.kind(), q.full(), q.Dialect)
		case q.Dialect == dialect:
			out[q.Name] = q.Text
		case q.Dialect == "":
			if _, own := out[q.Name]; !own {
				out[q.Name] = q.Text
			}
		}
	}
	for _, n := range Names(qs) {
		if _, ok := texts[n]; !ok {
			return nil, fmt.Errorf("query %s has no text for dialect %s", n, dialect)
		}
	}
	for _, n := range order {
		if _, ok := frags[n]; !ok {
			return nil, fmt.Errorf("fragment %s has no text for dialect %s", n, dialect)
		}
	}
	return expandFragments(texts, frags, order)
}

// Names returns the query names of qs, sorted, each once (a name with
// dialect blocks is one name); fragments are not queries.
func Names(qs []Query) []string {
	var out []string
	for _, q := range qs {
		if !q.Fragment {
			out = append(out, q.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Select returns the text of each of names, in that order, from texts (as
// returned by ForDialect): the table a package indexes with its generated
// constants. A name with no text is an error.
func Select(texts map[string]string, names []string) ([]string, error) {
	out := make([]string, len(names))
	var missing []string
	for i, n := range names {
		t, ok := texts[n]
		if !ok {
			missing = append(missing, n)
		}
		out[i] = t
	}
	if missing != nil {
		return nil, fmt.Errorf("no query named %s (generated names stale? run go generate)", strings.Join(missing, ", "))
	}
	return out, nil
}

// Portable returns the text of each name of qs, fragments replaced, for
// files whose queries serve every dialect as they are: a dialect block is an
// error.
func Portable(qs []Query) (map[string]string, error) {
	texts, frags := map[string]string{}, map[string]string{}
	var order []string
	for _, q := range qs {
		if q.Dialect != "" {
			return nil, fmt.Errorf("line %d: %s %s: this file has no dialect blocks", q.Line, q.kind(), q.full())
		}
		if q.Fragment {
			frags[q.Name] = q.Text
			order = append(order, q.Name)
			continue
		}
		texts[q.Name] = q.Text
	}
	return expandFragments(texts, frags, order)
}
