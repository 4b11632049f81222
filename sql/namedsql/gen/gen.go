// Package gen writes and checks the typed queries of a package that runs
// named queries (see package namedsql).
//
// Names: one constant per "-- name:", so that a misspelt name fails to
// build instead of failing at run time.
//
// Typed queries (with -typed): a query whose name line has a kind gets a
// generated method of the package's texts type, written once against
// dbtx (the generated interface of sqlx's QueryerContext and ExecerContext)
// so that the same method serves a pool, a transaction and a connection:
//
//	-- name: APIKeyList :many
//	-- in: user_id int64, user_id int64, limit int
//	-- out: APIKey
//	SELECT … WHERE (? = 0 OR t.user_id = ?) ORDER BY t.id DESC LIMIT ?;
//
// becomes q.APIKeyList(ctx, db, apiKeyListParams{UserID: …, Limit: …})
// returning []APIKey. The kinds:
//
//	:exec     the number of rows affected
//	:lastid   the id the insert created
//	:one      the row; sql.ErrNoRows when there is none
//	:many     the rows (an empty slice for none)
//	:execrows the number of rows affected by a multi-row insert: the
//	          method takes a slice of rows and runs one statement with the
//	          VALUES tuple once per row (namedsql.MultiRow; none for no
//	          row); every placeholder is in the tuple
//
// "-- in:" lists one "name type" per placeholder, in order; a name may
// come back (its value is passed again) and a slice type other than []byte
// is an IN list, expanded at run time. A type of another package is
// written with its package name and the package given to -imports
// (msg.Msg with -imports msg=github.com/shardjob/shardjob/admin/msg). One distinct parameter is passed as
// itself, more in a generated <query>Params struct. "-- in:" may instead
// name a struct type of the package (one word): the text then has ":name"
// parameters, bound from the struct by its db tags (sqlx.Named), and each
// must have a field with that tag. "-- out:" is either the
// columns ("name type, …": one column is returned as its value, more as a
// generated <query>Row read by position) or the name of a struct type of
// the package, read by its db tags. Each dialect's text is checked when
// generating: as many placeholders as parameters; as many columns as listed
// and with the listed names (where a column has a name), or a db tag in
// the struct for every column. A query whose parameters or columns change
// thus fails to generate, and a caller of a changed struct fails to build.
// The kind, in and out lines go on one block of a name (a dialect block
// shares them).
//
// A package declares the generation in a go:generate line:
//
//	//go:generate go run github.com/shardjob/shardjob/sql/namedsql/gen/namegen -pkg store -type query -prefix q -o queries_gen.go [-typed queries -dialects mysql,postgres,sqlite] ../../sql/queries*.sql
//
// which writes the names to queries_gen.go and the typed methods of each
// SQL file to typed_<file>_gen.go, and calls Check from a test, which fails
// when a generated file is stale or left over, or when a query is used by
// no code of the package (a dead query): an untyped one by its constant, a
// typed one by its method.
package gen

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/shardjob/shardjob/sql/namedsql"
)

// Command is the command of the go:generate lines Check looks for.
const Command = "go run github.com/shardjob/shardjob/sql/namedsql/gen/namegen"

// options are the arguments of namegen.
type options struct {
	pkg, typ, prefix, out string
	exclude               string   // base names of files to leave out, comma-separated
	patterns              []string // globs of the SQL files, relative to the package
	typed                 string   // the package's type of query texts, for typed methods; "" for names only
	dialects              string   // the dialects a typed query is checked against, comma-separated
	imports               string   // name=path,…: packages the types of typed queries may name (name.Type)
}

func parseArgs(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("namegen", flag.ContinueOnError)
	fs.StringVar(&o.pkg, "pkg", "", "package `name` of the generated file")
	fs.StringVar(&o.typ, "type", "query", "`name` of the generated type")
	fs.StringVar(&o.prefix, "prefix", "q", "`prefix` of each constant (then the query's name)")
	fs.StringVar(&o.out, "o", "queries_gen.go", "generated `file`")
	fs.StringVar(&o.exclude, "exclude", "", "comma-separated base `names` of files the globs match that belong to another package")
	fs.StringVar(&o.typed, "typed", "", "the package's `type` of query texts ([]string indexed by the constants): write a method of it per typed query")
	fs.StringVar(&o.dialects, "dialects", "", "comma-separated `dialects` of the queries, to check typed queries against each")
	fs.StringVar(&o.imports, "imports", "", "comma-separated name=path `packages` that the types in -- in: and -- out: lines may name, e.g. msg=example.com/app/msg")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.patterns = fs.Args()
	if o.pkg == "" || len(o.patterns) == 0 {
		return o, errors.New("usage: namegen -pkg name [-type query] [-prefix q] [-o queries_gen.go] [-exclude a.sql,b.sql] [-typed queries -dialects a,b] files-or-globs…")
	}
	if (o.typed == "") != (o.dialects == "") {
		return o, errors.New("namegen: -typed and -dialects go together")
	}
	return o, nil
}

// File is a file namegen writes.
type File struct {
	Path string // relative to the package's directory
	Src  []byte
}

// Generate returns the files that namegen with args writes for the package
// in dir: the names (first), and with -typed a file of typed methods per
// SQL file that has typed queries (typed_<file>_gen.go).
func Generate(dir string, args []string) ([]File, error) {
	o, err := parseArgs(args)
	if err != nil {
		return nil, err
	}
	qs, files, err := readQueries(dir, o)
	if err != nil {
		return nil, err
	}
	names := namedsql.Names(qs)
	if len(names) == 0 {
		return nil, errors.New("no named query")
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by namegen %s; DO NOT EDIT.\n\n", strings.Join(args, " "))
	fmt.Fprintf(&b, "package %s\n\n", o.pkg)
	if o.typed != "" {
		b.WriteString("import \"github.com/jmoiron/sqlx\"\n\n")
	}
	fmt.Fprintf(&b, "// %s names a query of %s: one constant per \"-- name:\".\n", o.typ, strings.Join(o.patterns, " "))
	fmt.Fprintf(&b, "type %s int\n\nconst (\n", o.typ)
	for i, n := range names {
		if i == 0 {
			fmt.Fprintf(&b, "%s%s %s = iota\n", o.prefix, n, o.typ)
		} else {
			fmt.Fprintf(&b, "%s%s\n", o.prefix, n)
		}
	}
	fmt.Fprintf(&b, ")\n\n// %sNames are the names of the queries, in the order of the constants.\n", o.typ)
	fmt.Fprintf(&b, "var %sNames = [...]string{\n", o.typ)
	for _, n := range names {
		fmt.Fprintf(&b, "%q,\n", n)
	}
	fmt.Fprintf(&b, "}\n\nfunc (n %s) String() string { return %sNames[n] }\n", o.typ, o.typ)
	if o.typed != "" {
		b.WriteString("\n// dbtx is what a typed query runs on: a pool, a transaction or a connection.\ntype dbtx interface {\nsqlx.QueryerContext\nsqlx.ExecerContext\n}\n")
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format generated names: %w", err)
	}
	out := []File{{o.out, src}}
	if o.typed == "" {
		return out, nil
	}
	tq, err := typed(dir, o, qs, files)
	if err != nil {
		return nil, err
	}
	for _, f := range slices.Compact(slices.Sorted(slices.Values(files))) {
		var of []typedQuery
		for _, q := range tq {
			if q.file == f {
				of = append(of, q)
			}
		}
		if len(of) == 0 {
			continue
		}
		src, err := typedFile(o, f, of)
		if err != nil {
			return nil, err
		}
		out = append(out, File{typedFileName(f), src})
	}
	return out, nil
}

// typed returns the typed queries of qs, checked for every dialect of o.
func typed(dir string, o options, qs []namedsql.Query, files []string) ([]typedQuery, error) {
	dialects := strings.Split(o.dialects, ",")
	texts := map[string]map[string]string{}
	for _, d := range dialects {
		t, err := namedsql.ForDialect(qs, d, dialects)
		if err != nil {
			return nil, err
		}
		texts[d] = t
	}
	structs, err := packageStructs(dir, func(base string) bool { return generated(o, base) })
	if err != nil {
		return nil, err
	}
	return typedQueries(qs, files, texts, structs)
}

// generated reports whether base is a file namegen writes with o.
func generated(o options, base string) bool {
	return base == filepath.Base(o.out) || o.typed != "" && strings.HasPrefix(base, "typed_") && strings.HasSuffix(base, "_gen.go")
}

// readQueries returns the queries of the files o names, and the base name
// of the file of each.
func readQueries(dir string, o options) ([]namedsql.Query, []string, error) {
	var all []namedsql.Query
	var files []string
	for _, p := range o.patterns {
		matches, err := filepath.Glob(filepath.Join(dir, p))
		if err != nil {
			return nil, nil, err
		}
		if len(matches) == 0 {
			return nil, nil, fmt.Errorf("%s: no file", p)
		}
		for _, f := range matches {
			if slices.Contains(strings.Split(o.exclude, ","), filepath.Base(f)) {
				continue
			}
			text, err := os.ReadFile(f)
			if err != nil {
				return nil, nil, err
			}
			qs, err := namedsql.Parse(string(text))
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", filepath.Base(f), err)
			}
			all = append(all, qs...)
			for range qs {
				files = append(files, filepath.Base(f))
			}
		}
	}
	return all, files, nil
}

// Check looks for the namegen line of the package in dir and fails when a
// file it generates is stale or left over, or when a query is used by no
// other non-test Go file of the package (an untyped query: its constant; a
// typed one: its method).
func Check(dir string) error {
	args, err := generateArgs(dir)
	if err != nil {
		return err
	}
	want, err := Generate(dir, args)
	if err != nil {
		return err
	}
	o, _ := parseArgs(args)
	for _, f := range want {
		have, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			return err
		}
		if !bytes.Equal(have, f.Src) {
			return fmt.Errorf("%s is stale: run go generate", f.Path)
		}
	}
	onDisk, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range onDisk {
		base := filepath.Base(f)
		if generated(o, base) && !slices.ContainsFunc(want, func(w File) bool { return w.Path == base }) {
			return fmt.Errorf("%s is left over: run go generate and remove it", base)
		}
	}
	qs, files, _ := readQueries(dir, o)
	var typedNames []string
	if o.typed != "" {
		tq, err := typed(dir, o, qs, files)
		if err != nil {
			return err
		}
		for _, q := range tq {
			typedNames = append(typedNames, q.name)
		}
	}
	used, err := identifiers(dir, func(base string) bool { return generated(o, base) })
	if err != nil {
		return err
	}
	var dead []string
	for _, n := range namedsql.Names(qs) {
		if slices.Contains(typedNames, n) && !used["."+n] || !slices.Contains(typedNames, n) && !used[o.prefix+n] {
			dead = append(dead, n)
		}
	}
	if dead != nil {
		return fmt.Errorf("queries used by no code (remove them from the SQL, then go generate): %s", strings.Join(dead, ", "))
	}
	return nil
}

// Untyped returns the names of the queries of the package in dir that
// have no kind (see package doc), for a package that types its queries
// step by step and checks that the list only shrinks.
func Untyped(dir string) ([]string, error) {
	args, err := generateArgs(dir)
	if err != nil {
		return nil, err
	}
	o, err := parseArgs(args)
	if err != nil {
		return nil, err
	}
	qs, _, err := readQueries(dir, o)
	if err != nil {
		return nil, err
	}
	typedSet := map[string]bool{}
	for _, q := range qs {
		if q.Kind != "" {
			typedSet[q.Name] = true
		}
	}
	var out []string
	for _, n := range namedsql.Names(qs) {
		if !typedSet[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// generateArgs returns the arguments of the namegen line of dir's Go files.
func generateArgs(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(text), "\n") {
			if rest, ok := strings.CutPrefix(line, "//go:generate "+Command+" "); ok {
				return strings.Fields(rest), nil
			}
		}
	}
	return nil, fmt.Errorf("%s: no //go:generate %s line", dir, Command)
}

// identifiers returns the identifiers of the non-test Go files of dir
// (skip: generated ones), and each selected name with a dot before it
// (".Name" for x.Name).
func identifiers(dir string, skip func(base string) bool) (map[string]bool, error) {
	used := map[string]bool{}
	err := inspectPackage(dir, skip, func(n ast.Node) {
		if id, ok := n.(*ast.Ident); ok {
			used[id.Name] = true
		}
		if sel, ok := n.(*ast.SelectorExpr); ok {
			used["."+sel.Sel.Name] = true
		}
	})
	return used, err
}

// inspectPackage calls visit for every node of the non-test Go files of
// dir (skip: generated ones).
func inspectPackage(dir string, skip func(base string) bool, visit func(ast.Node)) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || skip(filepath.Base(f)) {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			visit(n)
			return true
		})
	}
	return nil
}
