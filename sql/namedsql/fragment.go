package namedsql

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// fragmentPrefix starts the line that names a fragment: a piece of SQL
// (typically the column list of a table) written once and used by several
// queries of the same files.
const fragmentPrefix = "-- fragment:"

// maxExpanded bounds the text of a fragment and of a query once fragments
// are replaced, so that fragments using fragments cannot blow a file up.
const maxExpanded = 1 << 20

// fragmentRef matches the uses of a fragment in a query or in another
// fragment:
//
//	{{Name}}          the fragment's text
//	{{named(Name)}}   ":c1, :c2, …" — a column list as named parameters (sqlx)
//	{{assign(Name)}}  "c1 = :c1, c2 = :c2, …" — a column list set from them
//
// Other {{…}} (a package's own macros such as {{now_ms}} or
// {{upsert(cols)}}) are left as they are.
var fragmentRef = regexp.MustCompile(`\{\{(?:(named|assign)\((\w*)\)|(\w+))\}\}`)

// expandFragments returns texts (queries by name) with the fragments of
// frags (their texts by name, for one dialect) replaced; order lists the
// fragment names in file order, for errors that do not depend on map
// order.
func expandFragments(texts, frags map[string]string, order []string) (map[string]string, error) {
	done := map[string]string{}
	busy := map[string]bool{}
	var resolve func(name string) (string, error)
	expand := func(text, where string) (string, error) {
		var err error
		out := fragmentRef.ReplaceAllStringFunc(text, func(ref string) string {
			if err != nil {
				return ref
			}
			m := fragmentRef.FindStringSubmatch(ref)
			call, arg, plain := m[1], m[2], m[3]
			if plain != "" {
				if _, ok := frags[plain]; !ok {
					return ref // a macro of the package
				}
				var t string
				t, err = resolve(plain)
				return t
			}
			if _, ok := frags[arg]; !ok {
				err = fmt.Errorf("%s: %s: no fragment named %q", where, ref, arg)
				return ref
			}
			var t string
			if t, err = resolve(arg); err != nil {
				return ref
			}
			var cols []string
			if cols, err = columnList(t); err != nil {
				err = fmt.Errorf("%s: %s: fragment %s: %w", where, ref, arg, err)
				return ref
			}
			parts := make([]string, len(cols))
			for i, c := range cols {
				if call == "named" {
					parts[i] = ":" + c
				} else {
					parts[i] = c + " = :" + c
				}
			}
			return strings.Join(parts, ", ")
		})
		if err == nil && len(out) > maxExpanded {
			err = fmt.Errorf("%s: longer than %d bytes once fragments are replaced", where, maxExpanded)
		}
		return out, err
	}
	resolve = func(name string) (string, error) {
		if t, ok := done[name]; ok {
			return t, nil
		}
		if busy[name] {
			return "", fmt.Errorf("fragment %s uses itself", name)
		}
		busy[name] = true
		t, err := expand(frags[name], "fragment "+name)
		if err != nil {
			return "", err
		}
		done[name] = t
		return t, nil
	}
	for _, name := range order {
		if _, err := resolve(name); err != nil {
			return nil, err
		}
	}
	out := make(map[string]string, len(texts))
	for _, name := range slices.Sorted(maps.Keys(texts)) {
		t, err := expand(texts[name], "query "+name)
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// columnList returns the columns of text, a comma-separated list of column
// names.
func columnList(text string) ([]string, error) {
	var cols []string
	for _, c := range strings.Split(text, ",") {
		c = strings.TrimSpace(c)
		if !identifier(c) {
			return nil, fmt.Errorf("not a list of column names (%q)", c)
		}
		cols = append(cols, c)
	}
	return cols, nil
}
