package store_test

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testOnlyExports are the store's exported names that no production code
// outside the store calls, and why each stays.
var testOnlyExports = map[string]string{
	"Store.Pool":              "the tests' door to raw SQL (fixtures, counts); it goes once the tests' stack builders keep their own pool",
	"SlackLinkedError.Unwrap": "errors.Is and errors.As call it",
}

// sourceFile is a parsed production file of the module (no tests, no
// generated templ code), with its path from the module's root.
type sourceFile struct {
	rel  string
	file *ast.File
}

// productionFiles parses the module's production Go files: those of the
// store itself (inStore) or those of everything else.
func productionFiles(t *testing.T, inStore bool) []sourceFile {
	t.Helper()
	root := ".."
	fset := token.NewFileSet()
	var out []sourceFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if base == "testdata" || (strings.HasPrefix(base, ".") && rel != ".") || base == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || strings.HasSuffix(rel, "_templ.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		// A test helper (a package whose name ends in "test", such as
		// store/dbtest) is test code, as internal/depcheck counts it.
		if strings.HasSuffix(dir, "test") || (dir == "store") != inStore {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		out = append(out, sourceFile{rel, f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEveryExportHasACallerOutsideTheStore fails on an exported method or
// function of the store that no production code outside the store names:
// what only tests use belongs in the tests (store/dbtest for what several
// share), and what only the store uses is unexported. A method counts as
// named when some file calls or declares (in an interface) a method of
// its name, so a name that two types share may hide one of them.
func TestEveryExportHasACallerOutsideTheStore(t *testing.T) {
	t.Parallel()
	named := map[string]bool{}
	for _, f := range productionFiles(t, false) {
		ast.Inspect(f.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				named[n.Sel.Name] = true
			case *ast.InterfaceType:
				for _, m := range n.Methods.List {
					for _, name := range m.Names {
						named[name.Name] = true
					}
				}
			}
			return true
		})
	}
	var exports []string
	for _, f := range productionFiles(t, true) {
		for _, d := range f.file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() {
				continue
			}
			key := fn.Name.Name
			if fn.Recv != nil {
				recv := fn.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				id, ok := recv.(*ast.Ident)
				if !ok || !id.IsExported() {
					continue
				}
				key = id.Name + "." + key
			}
			exports = append(exports, key)
			if _, ok := testOnlyExports[key]; ok || named[fn.Name.Name] {
				continue
			}
			t.Errorf("%s: store's %s has no caller outside the store but tests: unexport it, delete it, "+
				"or move it to the tests that use it (store/dbtest when several packages' tests do)", f.rel, key)
		}
	}
	for key := range testOnlyExports {
		if !slices.Contains(exports, key) {
			t.Errorf("testOnlyExports names %s, which the store no longer exports", key)
		}
	}
}

// TestNoTypeCopiesAStoreRow fails on a struct type outside the store with
// the fields of one of the store's, in order, of the same types: a copy
// that only converts from the store's type (lists' filters and cursors,
// metrics' filter, accounts' session were). Use the store's type, by an
// alias where web must name it (web names no store type). A type that
// differs in a field (a typed state, a hidden secret, a decoded payload)
// is a view of the row, not a copy, and is not caught.
func TestNoTypeCopiesAStoreRow(t *testing.T) {
	t.Parallel()
	storeTypes := map[string]bool{}
	for _, f := range productionFiles(t, true) {
		for _, d := range f.file.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					storeTypes[s.(*ast.TypeSpec).Name.Name] = true
				}
			}
		}
	}
	shapes := map[string]string{}
	for _, f := range productionFiles(t, true) {
		eachStruct(f.file, func(name string, st *ast.StructType) {
			if s, ok := structShape(st, "store.", storeTypes); ok {
				shapes[s] = name
			}
		})
	}
	for _, f := range productionFiles(t, false) {
		eachStruct(f.file, func(name string, st *ast.StructType) {
			s, ok := structShape(st, "", nil)
			if row, twin := shapes[s]; ok && twin {
				t.Errorf("%s: %s has the fields of store.%s: use store.%s (by alias where web names it)", f.rel, name, row, row)
			}
		})
	}
}

// eachStruct calls fn on each named struct type declared at f's top level;
// an alias is one type under two names, not a copy.
func eachStruct(f *ast.File, fn func(name string, st *ast.StructType)) {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			ts := s.(*ast.TypeSpec)
			if st, ok := ts.Type.(*ast.StructType); ok && !ts.Assign.IsValid() {
				fn(ts.Name.Name, st)
			}
		}
	}
}

// structShape is a struct's fields as text, names and types in order, the
// store's own types qualified as outside it; ok is false for a struct that
// embeds a type or has fewer than two fields, too little to call a copy.
func structShape(st *ast.StructType, qualify string, local map[string]bool) (shape string, ok bool) {
	var b strings.Builder
	n := 0
	for _, fld := range st.Fields.List {
		if len(fld.Names) == 0 {
			return "", false
		}
		typ := fld.Type
		if qualify != "" {
			typ = qualified(typ, qualify, local)
		}
		var tb strings.Builder
		_ = printer.Fprint(&tb, token.NewFileSet(), typ)
		for _, name := range fld.Names {
			b.WriteString(name.Name + " " + tb.String() + ";")
			n++
		}
	}
	return b.String(), n >= 2
}

// qualified is typ with the store's own type names (local) written as
// another package names them.
func qualified(typ ast.Expr, prefix string, local map[string]bool) ast.Expr {
	switch x := typ.(type) {
	case *ast.Ident:
		if local[x.Name] {
			return ast.NewIdent(prefix + x.Name)
		}
	case *ast.StarExpr:
		return &ast.StarExpr{X: qualified(x.X, prefix, local)}
	case *ast.ArrayType:
		return &ast.ArrayType{Len: x.Len, Elt: qualified(x.Elt, prefix, local)}
	case *ast.MapType:
		return &ast.MapType{Key: qualified(x.Key, prefix, local), Value: qualified(x.Value, prefix, local)}
	}
	return typ
}
