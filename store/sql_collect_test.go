package store_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sqlStatement is one SQL statement found in the store package's source,
// with where it is written.
type sqlStatement struct {
	SQL string
	Pos token.Position
}

// sqlSite is SQL built at run time: an argument of a pgx call that is not
// a constant, or a + of strings with a statement's start among its pieces.
// Its statements are not constants of the source, so the test gives values
// to its pieces that are not constants (keyed by their source text, e.g.
// `where`) and prepares what they make with its constant pieces.
type sqlSite struct {
	Key    string // file and function, e.g. "approval_queue.go:ApprovalQueue"
	Pos    token.Position
	Pieces []sqlPiece
}

// sqlPiece is a piece of a site's SQL: a constant, a call of one of the
// store's functions with constant arguments, or another expression's source
// text.
type sqlPiece struct {
	Const bool
	Text  string
	Func  string // the function called, when Args are its constant arguments
	Args  []any
}

// sqlKeyword is how a constant string that is a whole statement starts. The
// store writes SQL keywords in capitals, so prose never matches.
var sqlKeyword = regexp.MustCompile(`^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|DROP|LISTEN|LOCK|TRUNCATE|VALUES)\b`)

// sqlMethods are the pgx methods (on pools, connections, transactions and
// the store's dbtx) whose SQL argument is checked, with its index.
var sqlMethods = map[string]int{"Query": 1, "QueryRow": 1, "Exec": 1, "Prepare": 2, "Queue": 0}

// collectSQL type-checks the store package (the non-test files in the
// current directory) and returns its SQL: every constant string that is a
// whole statement, every statement a helper completes from its callers'
// constant arguments (task's lock, invocation's where), and the call sites
// whose SQL only exists at run time.
func collectSQL(t *testing.T) ([]sqlStatement, []sqlSite) {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{},
		Defs:  map[*ast.Ident]types.Object{},
		Uses:  map[*ast.Ident]types.Object{},
	}
	conf := types.Config{Importer: exportDataImporter(t, fset)}
	if _, err := conf.Check("countersign/store", fset, files, info); err != nil {
		t.Fatalf("type-checking store: %v", err)
	}
	c := &collector{fset: fset, info: info, funcs: map[types.Object]*ast.FuncDecl{}, seen: map[string]bool{}, sitesAt: map[token.Pos]bool{}}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				c.funcs[info.Defs[n.Name]] = n
			case *ast.CallExpr:
				c.calls = append(c.calls, n)
			}
			return true
		})
	}
	for _, f := range files {
		c.file(f)
	}
	return c.stmts, c.sites
}

type collector struct {
	fset  *token.FileSet
	info  *types.Info
	funcs map[types.Object]*ast.FuncDecl
	calls []*ast.CallExpr // every call in the package, for a helper's callers
	stmts []sqlStatement
	sites []sqlSite
	seen  map[string]bool
	// sitesAt holds the expressions already taken as dynamic SQL.
	sitesAt map[token.Pos]bool
}

func (c *collector) add(sql string, pos token.Pos) {
	if c.seen[sql] {
		return
	}
	c.seen[sql] = true
	c.stmts = append(c.stmts, sqlStatement{SQL: sql, Pos: c.fset.Position(pos)})
}

// file walks f's declarations for statements and sites.
func (c *collector) file(f *ast.File) {
	for _, d := range f.Decls {
		var fn *ast.FuncDecl
		if fd, ok := d.(*ast.FuncDecl); ok {
			fn = fd
		}
		var stack []ast.Node
		ast.Inspect(d, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			var parent ast.Node
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			stack = append(stack, n)
			if e, ok := n.(ast.Expr); ok {
				if tv := c.info.Types[e]; tv.Value != nil && tv.Value.Kind() == constant.String {
					if s := constant.StringVal(tv.Value); sqlKeyword.MatchString(s) && !c.fragment(parent) {
						c.add(s, e.Pos())
					}
					// A constant's pieces are not statements of their own.
					stack = stack[:len(stack)-1]
					return false
				}
			}
			if call, ok := n.(*ast.CallExpr); ok {
				c.call(fn, call)
			}
			if b, ok := n.(*ast.BinaryExpr); ok && b.Op == token.ADD && !c.fragment(parent) && c.isString(b) {
				for _, p := range c.pieces(b) {
					if p.Const && sqlKeyword.MatchString(p.Text) {
						c.dynamic(fn, b, false)
						break
					}
				}
			}
			return true
		})
	}
}

// fragment reports whether an expression (a constant, or a + of strings)
// under parent is not a statement of its own: an operand of a larger +, a const declaration's
// value (collected where it is used whole), or an argument of a strings or
// fmt function (a prefix compared, a format).
func (c *collector) fragment(parent ast.Node) bool {
	switch p := parent.(type) {
	case *ast.BinaryExpr:
		return p.Op == token.ADD
	case *ast.ParenExpr:
		return true
	case *ast.ValueSpec:
		return c.info.Defs[p.Names[0]] != nil && isConst(c.info.Defs[p.Names[0]])
	case *ast.CallExpr:
		if fn, ok := c.callee(p).(*types.Func); ok && fn.Pkg() != nil {
			return fn.Pkg().Path() == "strings" || fn.Pkg().Path() == "fmt"
		}
	}
	return false
}

func isConst(obj types.Object) bool {
	_, ok := obj.(*types.Const)
	return ok
}

// call records the SQL argument of a pgx call that is not a constant.
func (c *collector) call(fn *ast.FuncDecl, call *ast.CallExpr) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return
	}
	i, ok := sqlMethods[sel.Sel.Name]
	if !ok || i >= len(call.Args) {
		return
	}
	if arg := call.Args[i]; c.isString(arg) && c.info.Types[arg].Value == nil {
		c.dynamic(fn, arg, true)
	}
}

func (c *collector) isString(e ast.Expr) bool {
	b, ok := c.info.Types[e].Type.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

// dynamic records SQL that is not a constant: completed from the
// enclosing helper's callers when it is a whole statement sent by a pgx
// call (viaCallers) and can be, else as a site. A + outside a pgx call may
// be a builder's piece, so its function's callers are not asked.
func (c *collector) dynamic(fn *ast.FuncDecl, e ast.Expr, viaCallers bool) {
	if c.sitesAt[e.Pos()] {
		return
	}
	c.sitesAt[e.Pos()] = true
	depth := 0
	if viaCallers {
		depth = 2
	}
	if stmts, ok := c.evalCalls(fn, e, depth); ok {
		for _, s := range stmts {
			c.add(s.SQL, s.at)
		}
		return
	}
	name := "?"
	if fn != nil {
		name = fn.Name.Name
	}
	pos := c.fset.Position(e.Pos())
	c.sites = append(c.sites, sqlSite{Key: filepath.Base(pos.Filename) + ":" + name, Pos: pos, Pieces: c.pieces(e)})
}

// exportDataImporter imports the store's dependencies from the compiler's
// export data, as `go list -export` finds it in the build cache: much faster
// than type-checking them from source.
func exportDataImporter(t *testing.T, fset *token.FileSet) types.Importer {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %q", path)
		}
		return os.Open(file)
	})
}
