package console_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// titlesLeft are the files whose page titles another change converts:
// task_view.go's "Task <id>" is the task page's, being moved with the
// rest of that file (its message, console.labels.title.task, is ready).
var titlesLeft = map[string]bool{"task_view.go": true}

// TestConsoleLabelsComeFromTheCatalogue: a console page's title (h.Page,
// an admin confirmation's, an error page's), and the labels, names and
// explanations handlers give pages (a choice's label and what it means, a
// metric's name, an option's words) are console.* messages, never English
// written in code or glued around a value: an installation's override of
// each shows, and a count agrees with its noun.
func TestConsoleLabelsComeFromTheCatalogue(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || titlesLeft[name] {
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
				case "h.Page", "h.renderConfirm":
					if len(n.Args) > 1 && literal(n.Args[1]) {
						t.Errorf("%s: a page title written in code; give it a console.labels.title.* id", fset.Position(n.Pos()))
					}
				case "kit.SetFlash":
					if len(n.Args) > 1 && sprintf(n.Args[1]) {
						t.Errorf("%s: a flash message formatted in code; give it a console.* id with named parameters", fset.Position(n.Pos()))
					}
				case "h.renderConfirmStatus":
					if len(n.Args) > 2 && literal(n.Args[2]) {
						t.Errorf("%s: a page title written in code; give it a console.labels.title.* id", fset.Position(n.Pos()))
					}
				}
			case *ast.AssignStmt:
				for i, lhs := range n.Lhs {
					if sel, ok := lhs.(*ast.SelectorExpr); ok && labelFields[sel.Sel.Name] && i < len(n.Rhs) && words(n.Rhs[i]) {
						t.Errorf("%s: a page's %s written in code; give it a console.* id", fset.Position(n.Pos()), sel.Sel.Name)
					}
				}
			case *ast.CompositeLit:
				sel, ok := n.Type.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "views" {
					return true
				}
				for _, e := range n.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					if key, ok := kv.Key.(*ast.Ident); ok && labelFields[key.Name] && words(kv.Value) {
						t.Errorf("%s: views.%s's %s written in code; give it a console.* id", fset.Position(kv.Pos()), sel.Sel.Name, key.Name)
					}
				}
			}
			return true
		})
	}
}

// labelFields are the fields of a page's model that are words for people:
// a title, a label, a name, what a choice means, a status, how something
// is known or was linked, a stage.
var labelFields = map[string]bool{"Title": true, "Label": true, "Name": true, "About": true, "Status": true,
	"KnownBy": true, "How": true, "Stage": true}

// words reports whether e is, or glues in, a string written in code that
// holds a word (a "." joining a path is not one).
func words(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING && letter.MatchString(e.Value)
	case *ast.BinaryExpr:
		return words(e.X) || words(e.Y)
	case *ast.ParenExpr:
		return words(e.X)
	}
	return false
}

var letter = regexp.MustCompile(`\pL`)

// sprintf reports whether e is a fmt.Sprintf of a format holding words.
func sprintf(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	return ok && callee(call) == "fmt.Sprintf" && len(call.Args) > 0 && words(call.Args[0])
}
