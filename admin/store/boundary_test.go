package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyStoreUsesSQLX: production code outside admin/store neither
// imports sqlx (so it never holds a *sqlx.DB or *sqlx.Tx) nor calls DB()
// (the store's pool, for tests): it uses the store's typed methods, Tx for
// a transaction, and admin/runstate for the run state machine. Tests may
// use DB() to count rows.
func TestOnlyStoreUsesSQLX(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	storeDir := filepath.Join(root, "admin", "store")
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path == storeDir || (path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "node_modules" || name == "testdata")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		rel, _ := filepath.Rel(root, path)
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/jmoiron/sqlx" {
				t.Errorf("%s imports sqlx: only admin/store may (use the store's typed methods, or store.Tx)", rel)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) > 0 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "DB" {
				t.Errorf("%s:%d calls DB(): only tests may use the store's pool", rel, fset.Position(call.Pos()).Line)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files under %s: is the walk rooted at the module?", checked, root)
	}
}
