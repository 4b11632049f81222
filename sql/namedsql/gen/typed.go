package gen

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/shardjob/shardjob/sql/namedsql"
)

// The kinds of a typed query, written after its name ("-- name: X :one"):
// what its generated method returns besides an error.
const (
	kindExec   = "exec"     // the number of rows affected
	kindLastID = "lastid"   // the id the insert created (LastInsertId)
	kindOne    = "one"      // the one row (sql.ErrNoRows when there is none)
	kindMany   = "many"     // every row, an empty slice for none
	kindRows   = "execrows" // an insert of many rows at once: its VALUES tuple once per row; the rows affected
)

// field is a parameter ("-- in:") or a column ("-- out:") of a typed query.
type field struct {
	name   string // as written: the column or parameter name
	goName string // the field of the generated struct
	goType string // a Go type expression
}

// typedQuery is a query with a kind, its parameters and its columns.
type typedQuery struct {
	name, kind, file string
	line             int
	in               []field // one per placeholder, in order; a name may repeat
	inType           string  // the package's struct bound by its db tags to the text's :name parameters
	out              []field // the columns, when "-- out:" lists them
	outType          string  // the package's struct the row is scanned into, by db tags
}

// typedQueries returns the typed queries of qs (file: the base name of the
// SQL file of each), checked against their text for each dialect (texts,
// dialect → name → text as ForDialect returns it): as many placeholders
// as parameters, and for a query that returns rows, the columns.
func typedQueries(qs []namedsql.Query, files []string, texts map[string]map[string]string, structs map[string][]string) ([]typedQuery, error) {
	byName := map[string]*typedQuery{}
	var order []string
	blocks := map[string]int{}
	for i, q := range qs {
		if q.Fragment || q.Kind == "" && q.In == "" && q.Out == "" {
			continue
		}
		if blocks[q.Name]++; blocks[q.Name] > 1 {
			return nil, fmt.Errorf("%s:%d: query %s: typed in two blocks: give the kind, in and out once, on one block", files[i], q.Line, q.Name)
		}
	}
	for i, q := range qs {
		if q.Fragment || q.Kind == "" && q.In == "" && q.Out == "" {
			continue
		}
		where := fmt.Sprintf("%s:%d: query %s", files[i], q.Line, q.Name)
		t := &typedQuery{name: q.Name, kind: q.Kind, file: files[i], line: q.Line}
		switch q.Kind {
		case kindExec, kindLastID, kindRows:
			if q.Out != "" {
				return nil, fmt.Errorf("%s: a :%s query returns no row: remove its out line", where, q.Kind)
			}
		case kindOne, kindMany:
			if q.Out == "" {
				return nil, fmt.Errorf("%s: a :%s query needs an out line (its columns, or a struct of the package)", where, q.Kind)
			}
		case "":
			return nil, fmt.Errorf("%s: has in or out lines but no kind: write \"-- name: %s :exec\" (or :lastid, :one, :many)", where, q.Name)
		default:
			return nil, fmt.Errorf("%s: unknown kind :%s (:exec, :lastid, :one, :many or :execrows)", where, q.Kind)
		}
		var err error
		if structName(q.In) {
			t.inType = q.In
			if _, ok := structs[t.inType]; !ok {
				return nil, fmt.Errorf("%s: in: %q is not \"name type\", nor a struct type of the package", where, t.inType)
			}
			if q.Kind == kindRows {
				return nil, fmt.Errorf("%s: a :%s query takes its rows' parameters by position: list them in its in line", where, q.Kind)
			}
		} else if t.in, err = fields(q.In); err != nil {
			return nil, fmt.Errorf("%s: in: %w", where, err)
		}
		if q.Kind == kindRows && slices.ContainsFunc(t.in, func(f field) bool { return strings.HasPrefix(f.goType, "[]") && f.goType != "[]byte" }) {
			return nil, fmt.Errorf("%s: in: a :%s query takes no IN list", where, q.Kind)
		}
		if err := sameTypes(t.in); err != nil {
			return nil, fmt.Errorf("%s: in: %w", where, err)
		}
		if structName(q.Out) {
			t.outType = q.Out
			if _, ok := structs[t.outType]; !ok {
				return nil, fmt.Errorf("%s: out: no struct type %s in the package", where, t.outType)
			}
		} else if t.out, err = fields(q.Out); err != nil {
			return nil, fmt.Errorf("%s: out: %w", where, err)
		}
		for _, d := range slices.Sorted(mapKeys(texts)) {
			if err := t.check(texts[d][q.Name], structs); err != nil {
				return nil, fmt.Errorf("%s, dialect %s: %w", where, d, err)
			}
		}
		byName[q.Name] = t
		order = append(order, q.Name)
	}
	slices.Sort(order)
	out := make([]typedQuery, len(order))
	for i, n := range order {
		out[i] = *byName[n]
	}
	return out, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// structName reports whether an in or out line names a struct (one word)
// rather than listing fields.
func structName(s string) bool {
	return s != "" && !strings.ContainsAny(s, " ,")
}

// check compares t with its text for one dialect.
func (t *typedQuery) check(text string, structs map[string][]string) error {
	_, n, err := namedsql.Placeholders(text, func(*strings.Builder, int) error { return nil })
	if err != nil {
		return err
	}
	if t.inType != "" {
		if n != 0 {
			return fmt.Errorf("%d placeholders: a query that binds %s by name has :name parameters only", n, t.inType)
		}
		if err := namedParams(text, structs[t.inType]); err != nil {
			return fmt.Errorf("%w in %s", err, t.inType)
		}
	} else if n != len(t.in) {
		return fmt.Errorf("%d placeholders but %d parameters in its in line", n, len(t.in))
	}
	if t.kind == kindRows {
		if len(t.in) == 0 {
			return fmt.Errorf("a :%s query needs an in line (the parameters of a row)", t.kind)
		}
		_, n2, _ := namedsql.Placeholders(namedsql.MultiRow(text, 2), func(*strings.Builder, int) error { return nil })
		if n2 != 2*n {
			return fmt.Errorf("a :%s query has every placeholder in its VALUES tuple (repeated once per row): %d of %d are", t.kind, n2-n, n)
		}
	}
	if t.kind != kindOne && t.kind != kindMany {
		return nil
	}
	cols, err := selectColumns(text)
	if err != nil {
		return err
	}
	if t.outType != "" {
		tags := structs[t.outType]
		for i, c := range cols {
			if c == "" {
				return fmt.Errorf("column %d has no name: give it an alias (AS name) to scan it into %s", i+1, t.outType)
			}
			if !slices.Contains(tags, c) {
				return fmt.Errorf("column %s has no field with the tag db:%q in %s", c, c, t.outType)
			}
		}
		return nil
	}
	if len(cols) != len(t.out) {
		return fmt.Errorf("%d columns but %d in its out line", len(cols), len(t.out))
	}
	for i, c := range cols {
		if c != "" && c != t.out[i].name {
			return fmt.Errorf("column %d is %s but its out line says %s", i+1, c, t.out[i].name)
		}
	}
	return nil
}

// namedParams checks that every :name parameter of text has a db tag
// among tags, and that there is one. It reads the names as sqlx's named
// queries do: ':' then letters, digits, '_' and '.'; "::" is a literal
// ':' (a PostgreSQL cast) and ":=" an assignment.
func namedParams(text string, tags []string) error {
	n := 0
	for i := 0; i < len(text); i++ {
		if text[i] != ':' {
			continue
		}
		if i+1 < len(text) && (text[i+1] == ':' || text[i+1] == '=') {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && (text[j] == '_' || text[j] == '.' || unicode.IsLetter(rune(text[j])) || unicode.IsDigit(rune(text[j]))) {
			j++
		}
		if name := text[i+1 : j]; name != "" {
			if !slices.Contains(tags, name) {
				return fmt.Errorf("parameter :%s has no field with the tag db:%q", name, name)
			}
			n++
		}
		i = j - 1
	}
	if n == 0 {
		return errors.New("no :name parameter")
	}
	return nil
}

// fields reads "name type, name type, …" (a type may hold no comma).
func fields(s string) ([]field, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []field
	for _, part := range strings.Split(s, ",") {
		name, typ, ok := strings.Cut(strings.TrimSpace(part), " ")
		typ = strings.TrimSpace(typ)
		if !ok || !ident(name) || typ == "" {
			return nil, fmt.Errorf("%q is not \"name type\"", strings.TrimSpace(part))
		}
		out = append(out, field{name: name, goName: goName(name), goType: typ})
	}
	return out, nil
}

// sameTypes checks that a parameter used twice has one type.
func sameTypes(fs []field) error {
	seen := map[string]string{}
	for _, f := range fs {
		if t, ok := seen[f.name]; ok && t != f.goType {
			return fmt.Errorf("%s is %s and %s", f.name, t, f.goType)
		}
		seen[f.name] = f.goType
	}
	return nil
}

func ident(s string) bool {
	for i, c := range s {
		if !(c == '_' || unicode.IsLetter(c) || i > 0 && unicode.IsDigit(c)) {
			return false
		}
	}
	return s != ""
}

// initialisms are written in capitals in Go names.
var initialisms = map[string]string{"id": "ID", "ids": "IDs", "api": "API", "url": "URL", "json": "JSON", "sql": "SQL", "http": "HTTP", "ip": "IP", "ms": "MS", "tz": "TZ", "utc": "UTC", "xxl": "XXL"}

// goName turns a column or parameter name (snake_case or camelCase) into
// an exported Go name: user_id → UserID.
func goName(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(s, "_") {
		if part == "" {
			continue
		}
		if up, ok := initialisms[strings.ToLower(part)]; ok {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// unexported lowers the leading capitals of an exported name the Go way:
// APIKeyAuth → apiKeyAuth, JobByID → jobByID, XXL → xxl.
func unexported(s string) string {
	k := 0
	for k < len(s) && s[k] >= 'A' && s[k] <= 'Z' {
		k++
	}
	switch {
	case k == 0:
		return s
	case k == len(s):
		return strings.ToLower(s)
	case k > 1:
		k--
	}
	return strings.ToLower(s[:k]) + s[k:]
}

// argName is the Go name of a parameter passed on its own: user_id →
// userID, ids → ids; a Go keyword gets "Arg" after it.
func argName(name string) string {
	parts := strings.Split(strings.Trim(name, "_"), "_")
	first := parts[0]
	if len(parts) == 1 && first != strings.ToLower(first) {
		first = unexported(first) // camelCase already
	} else {
		first = strings.ToLower(first)
	}
	out := first + goName(strings.Join(parts[1:], "_"))
	if token.IsKeyword(out) {
		out += "Arg"
	}
	return out
}

// selectColumns returns the names of the columns of the first SELECT at the
// top level of text (after a WITH's parenthesised queries): each column's
// alias, or the column itself for a plain (qualified) column, or "" for an
// expression without an alias.
func selectColumns(text string) ([]string, error) {
	words := topLevel(text)
	start := -1
	for i, w := range words {
		if w.depth == 0 && strings.EqualFold(w.text, "SELECT") {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("no SELECT at the top level for its columns")
	}
	if start < len(words) && strings.EqualFold(words[start].text, "DISTINCT") {
		start++
	}
	var cols []string
	var cur []string
	end := func() {
		cols = append(cols, columnName(cur))
		cur = nil
	}
	for _, w := range words[start:] {
		if w.depth == 0 && isClause(w.text) {
			break
		}
		if w.depth == 0 && w.text == "," {
			end()
			continue
		}
		cur = append(cur, w.text)
	}
	end()
	return cols, nil
}

func isClause(w string) bool {
	switch strings.ToUpper(w) {
	case "FROM", "WHERE", "UNION", "LIMIT", "ORDER", "GROUP", "HAVING":
		return true
	}
	return false
}

// columnName names a select item from its words.
func columnName(ws []string) string {
	n := len(ws)
	if n >= 2 && strings.EqualFold(ws[n-2], "AS") {
		return strings.Trim(ws[n-1], `"`+"`")
	}
	if n == 1 {
		parts := strings.Split(ws[0], ".")
		last := strings.Trim(parts[len(parts)-1], `"`+"`")
		if ident(last) {
			return last
		}
	}
	return ""
}

// word is a token of SQL text with the depth of parentheses it is at.
type word struct {
	text  string
	depth int
}

// topLevel splits text into words (identifiers with their dots, literals,
// punctuation) with their depth; comments are dropped.
func topLevel(text string) []word {
	var out []word
	depth := 0
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			i++
		case c == '-' && strings.HasPrefix(text[i:], "--"):
			if e := strings.IndexByte(text[i:], '\n'); e >= 0 {
				i += e
			} else {
				i = len(text)
			}
		case c == '\'' || c == '"' || c == '`':
			e := strings.IndexByte(text[i+1:], c)
			if e < 0 {
				e = len(text) - i - 2
			}
			out = append(out, word{text[i : i+e+2], depth})
			i += e + 2
		case c == '(':
			out = append(out, word{"(", depth})
			depth++
			i++
		case c == ')':
			depth--
			out = append(out, word{")", depth})
			i++
		case c == '_' || c == '.' || c == '{' || c == '}' || c == '*' || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)):
			j := i
			for j < len(text) && (text[j] == '_' || text[j] == '.' || text[j] == '{' || text[j] == '}' || text[j] == '*' || unicode.IsLetter(rune(text[j])) || unicode.IsDigit(rune(text[j]))) {
				j++
			}
			out = append(out, word{text[i:j], depth})
			i = j
		default:
			out = append(out, word{string(c), depth})
			i++
		}
	}
	return out
}

// packageStructs returns the db tags of each struct type declared in the
// non-test Go files of dir (skip: generated files), with those of its
// embedded structs of the same package.
func packageStructs(dir string, skip func(string) bool) (map[string][]string, error) {
	types := map[string]*ast.StructType{}
	err := inspectPackage(dir, skip, func(n ast.Node) {
		if ts, ok := n.(*ast.TypeSpec); ok {
			if st, ok := ts.Type.(*ast.StructType); ok {
				types[ts.Name.Name] = st
			}
		}
	})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	var tags func(st *ast.StructType, seen int) []string
	tags = func(st *ast.StructType, seen int) []string {
		var ts []string
		for _, f := range st.Fields.List {
			if len(f.Names) == 0 {
				if id, ok := f.Type.(*ast.Ident); ok && types[id.Name] != nil && seen < 8 {
					ts = append(ts, tags(types[id.Name], seen+1)...)
				}
				continue
			}
			if f.Tag == nil {
				continue
			}
			raw, err := strconv.Unquote(f.Tag.Value)
			if err != nil {
				continue
			}
			if db, _, _ := strings.Cut(reflect.StructTag(raw).Get("db"), ","); db != "" && db != "-" {
				ts = append(ts, db)
			}
		}
		return ts
	}
	for name, st := range types {
		out[name] = tags(st, 0)
	}
	return out, nil
}

// typedFile writes the Go file of the typed queries of one SQL file: a
// method of the texts type per query, with its parameter struct (for two
// parameters or more) and its row type (for listed columns).
func typedFile(o options, sqlFile string, qs []typedQuery) ([]byte, error) {
	var body bytes.Buffer
	for _, q := range qs {
		writeTyped(&body, o, q)
	}
	// What the generated code uses: the types of the parameters and
	// columns, and sqlx for IN lists and struct rows.
	var uses strings.Builder
	for _, q := range qs {
		for _, f := range append(slices.Clone(q.in), q.out...) {
			uses.WriteString(" " + f.goType)
		}
	}
	for _, pkg := range []string{"sqlx.", "namedsql."} {
		if bytes.Contains(body.Bytes(), []byte(pkg)) {
			uses.WriteString(" " + pkg)
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by namegen from %s; DO NOT EDIT.\n\n", sqlFile)
	fmt.Fprintf(&b, "package %s\n\nimport (\n\"context\"\n", o.pkg)
	known := []struct{ use, path string }{
		{"sql.", "database/sql"}, {"json.", "encoding/json"}, {"time.", "time"}, {"sqlx.", "github.com/jmoiron/sqlx"},
		{"namedsql.", "github.com/shardjob/shardjob/sql/namedsql"},
	}
	for _, imp := range strings.Split(o.imports, ",") {
		if name, path, ok := strings.Cut(strings.TrimSpace(imp), "="); ok {
			known = append(known, struct{ use, path string }{name + ".", path})
		}
	}
	for _, imp := range known {
		// imp.use as a whole package name: "sql." is not in " namedsql.".
		if regexp.MustCompile(`(^|[^\w.])` + regexp.QuoteMeta(imp.use)).MatchString(uses.String()) {
			fmt.Fprintf(&b, "%q\n", imp.path)
		}
	}
	b.WriteString(")\n\n")
	b.Write(body.Bytes())
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format typed queries of %s: %w\n%s", sqlFile, err, b.Bytes())
	}
	return src, nil
}

// typedFileName is the Go file of the typed queries of an SQL file.
func typedFileName(sqlFile string) string {
	return "typed_" + strings.TrimSuffix(filepath.Base(sqlFile), ".sql") + "_gen.go"
}

func writeTyped(b *bytes.Buffer, o options, q typedQuery) {
	low := unexported(q.name)
	// The distinct parameters, in order of first use.
	var params []field
	for _, f := range q.in {
		if !slices.ContainsFunc(params, func(p field) bool { return p.name == f.name }) {
			params = append(params, f)
		}
	}
	paramDecl := ""
	arg := func(f field) string { return argName(f.name) }
	switch {
	case q.inType != "":
		paramDecl = ", arg " + q.inType
	case len(params) == 1:
		paramDecl = ", " + arg(params[0]) + " " + params[0].goType
	case len(params) > 1:
		fmt.Fprintf(b, "// %sParams are the parameters of %s.\ntype %sParams struct {\n", low, q.name, low)
		for _, p := range params {
			fmt.Fprintf(b, "%s %s // %s\n", p.goName, p.goType, p.name)
		}
		b.WriteString("}\n\n")
		paramDecl = ", p " + low + "Params"
		arg = func(f field) string { return "p." + f.goName }
	}
	var args []string
	slice := false
	for _, f := range q.in {
		args = append(args, arg(f))
		slice = slice || strings.HasPrefix(f.goType, "[]") && f.goType != "[]byte"
	}
	argList := ""
	if len(args) > 0 {
		argList = ", " + strings.Join(args, ", ")
	}

	row, scan := "", ""
	switch {
	case q.outType != "":
		row = q.outType
	case len(q.out) == 1:
		row = q.out[0].goType
	case len(q.out) > 1:
		row = low + "Row"
		fmt.Fprintf(b, "// %s is a row of %s.\ntype %s struct {\n", row, q.name, row)
		var dests []string
		for _, c := range q.out {
			fmt.Fprintf(b, "%s %s // %s\n", c.goName, c.goType, c.name)
			dests = append(dests, "&r."+c.goName)
		}
		b.WriteString("}\n\n")
		scan = strings.Join(dests, ", ")
	}
	if len(q.out) == 1 {
		scan = "&r"
	}
	var ret, zero string
	switch q.kind {
	case kindExec, kindLastID:
		ret, zero = "int64", "0"
	case kindOne:
		ret, zero = row, "r"
	case kindMany:
		ret, zero = "[]"+row, "nil"
	}
	what := map[string]string{
		kindExec:   "the number of rows it affected",
		kindLastID: "the id of the row it inserted",
		kindOne:    "its row (sql.ErrNoRows when there is none)",
		kindMany:   "its rows",
		kindRows:   "the number of rows it affected",
	}[q.kind]
	if q.kind == kindRows {
		writeRows(b, o, q, params, args, what)
		return
	}
	fmt.Fprintf(b, "// %s runs query %s of %s on db (a pool or a transaction) and returns %s.\n", q.name, q.name, q.file, what)
	fmt.Fprintf(b, "func (q %s) %s(ctx context.Context, db dbtx%s) (%s, error) {\n", o.typed, q.name, paramDecl, ret)
	if q.kind == kindOne {
		fmt.Fprintf(b, "var r %s\n", row)
	}
	assign := ":="
	text := fmt.Sprintf("q[%s%s]", o.prefix, q.name)
	switch {
	case q.inType != "":
		fmt.Fprintf(b, "text, args, err := sqlx.Named(%s, arg)\nif err != nil {\nreturn %s, err\n}\n", text, zero)
		text, argList, assign = "text", ", args...", "="
	case slice:
		fmt.Fprintf(b, "text, args, err := sqlx.In(%s%s)\nif err != nil {\nreturn %s, err\n}\n", text, argList, zero)
		text, argList, assign = "text", ", args...", "="
	}
	switch {
	case q.kind == kindExec || q.kind == kindLastID:
		fmt.Fprintf(b, "res, err := db.ExecContext(ctx, %s%s)\nif err != nil {\nreturn 0, err\n}\n", text, argList)
		if q.kind == kindExec {
			b.WriteString("return res.RowsAffected()\n}\n\n")
		} else {
			b.WriteString("return res.LastInsertId()\n}\n\n")
		}
	case q.kind == kindOne && q.outType != "":
		fmt.Fprintf(b, "err %s sqlx.GetContext(ctx, db, &r, %s%s)\nreturn r, err\n}\n\n", assign, text, argList)
	case q.kind == kindOne:
		fmt.Fprintf(b, "err %s db.QueryRowxContext(ctx, %s%s).Scan(%s)\nreturn r, err\n}\n\n", assign, text, argList, scan)
	case q.kind == kindMany && q.outType != "":
		fmt.Fprintf(b, "out := []%s{}\nif err := sqlx.SelectContext(ctx, db, &out, %s%s); err != nil {\nreturn nil, err\n}\nreturn out, nil\n}\n\n", row, text, argList)
	default:
		fmt.Fprintf(b, "rows, err := db.QueryContext(ctx, %s%s)\nif err != nil {\nreturn nil, err\n}\ndefer rows.Close()\n", text, argList)
		fmt.Fprintf(b, "out := []%s{}\nfor rows.Next() {\nvar r %s\nif err := rows.Scan(%s); err != nil {\nreturn nil, err\n}\nout = append(out, r)\n}\nreturn out, rows.Err()\n}\n\n", row, row, scan)
	}
}

// writeRows writes the method of a :execrows query: one statement for all
// of its rows (none for no row), the VALUES tuple repeated once per row.
func writeRows(b *bytes.Buffer, o options, q typedQuery, params []field, args []string, what string) {
	row := argName(params[0].name)
	if len(params) > 1 {
		row = "p"
	}
	fmt.Fprintf(b, "// %s runs query %s of %s on db (a pool or a transaction), its VALUES tuple\n// once per row of rows, and returns %s.\n", q.name, q.name, q.file, what)
	fmt.Fprintf(b, "func (q %s) %s(ctx context.Context, db dbtx, rows []%s) (int64, error) {\n", o.typed, q.name, paramType(q, params))
	fmt.Fprintf(b, "if len(rows) == 0 {\nreturn 0, nil\n}\nargs := make([]any, 0, %d*len(rows))\n", len(q.in))
	fmt.Fprintf(b, "for _, %s := range rows {\nargs = append(args, %s)\n}\n", row, strings.Join(args, ", "))
	fmt.Fprintf(b, "res, err := db.ExecContext(ctx, namedsql.MultiRow(q[%s%s], len(rows)), args...)\nif err != nil {\nreturn 0, err\n}\nreturn res.RowsAffected()\n}\n\n", o.prefix, q.name)
}

// paramType is the type of a row of a :execrows query's parameters.
func paramType(q typedQuery, params []field) string {
	if len(params) == 1 {
		return params[0].goType
	}
	return unexported(q.name) + "Params"
}
