package console_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/text/language"

	"countersign/internal/locale"
)

// TestConsoleTextsComeFromTheCatalogue: the console's flash messages are
// catalogue messages (console.*, console.en.json), never sentences
// written in code, so an installation can override them like any text;
// and every console id the console's code and frame name is in the
// English catalogue (a misspelt one would show its id).
func TestConsoleTextsComeFromTheCatalogue(t *testing.T) {
	english := map[string]bool{}
	for _, m := range locale.Shipped().Messages(language.English) {
		english[m.ID] = true
	}
	named := func(where, id string) {
		if !english[id] {
			t.Errorf("%s: %q is not in the English catalogue (internal/locale/catalog/console.en.json)", where, id)
		}
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				switch callee(n) {
				case "kit.SetFlash":
					if len(n.Args) > 1 && literal(n.Args[1]) {
						t.Errorf("%s: a flash message written in code; give it a console.flash.* id in console.en.json", fset.Position(n.Pos()))
					}
				case "locale.Console":
					if lit, ok := n.Args[0].(*ast.BasicLit); ok {
						id, _ := strconv.Unquote(lit.Value)
						named(fset.Position(n.Pos()).String(), id)
					}
				}
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Flash" {
					for _, e := range n.Elts {
						if kv, ok := e.(*ast.KeyValueExpr); ok && literal(kv.Value) {
							t.Errorf("%s: a flash message written in code", fset.Position(n.Pos()))
						}
					}
				}
			case *ast.BasicLit:
				if id, err := strconv.Unquote(n.Value); err == nil && consoleID.MatchString(id) && !strings.HasSuffix(id, ".") {
					named(fset.Position(n.Pos()).String(), id)
				}
			}
			return true
		})
	}
	templs, err := filepath.Glob("../../views/*.templ")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range templs {
		templ, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`console(?:Text|With|N|Said|Marked)\("([^"]+)"`).FindAllStringSubmatch(string(templ), -1) {
			named(name, m[1])
		}
	}
}

var consoleID = regexp.MustCompile(`^console\.[a-z_]+\.[a-z_.]+$`)

func callee(c *ast.CallExpr) string {
	if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
		if x, ok := sel.X.(*ast.Ident); ok {
			return x.Name + "." + sel.Sel.Name
		}
	}
	return ""
}

// literal reports whether e is, or glues in, a string written in code.
func literal(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING && strings.TrimSpace(e.Value[1:len(e.Value)-1]) != ""
	case *ast.BinaryExpr:
		return literal(e.X) || literal(e.Y)
	case *ast.ParenExpr:
		return literal(e.X)
	}
	return false
}
