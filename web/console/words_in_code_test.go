package console_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestConsoleWordsInCodeComeFromTheCatalogue: no English a person reads
// on a console page is written in the console's Go code: not a field's
// error, a hint, a confirmation's heading or what it ends, a button, a
// phrase of a policy's row, a count's noun, a JSON error the page's
// script shows; nor do handlers show controlplane's English (a stage's
// Label, a reason's Sentence, DecidersWords, ApproverRolesProblem), which
// stays the API's and the assistant's. What is left in code is said below
// (notWords): log lines, error values no person reads, SSE protocol
// words, names of things.
func TestConsoleWordsInCodeComeFromTheCatalogue(t *testing.T) {
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
		for _, decl := range f.Decls {
			fn := ""
			if d, ok := decl.(*ast.FuncDecl); ok {
				fn = d.Name.Name
			}
			inspectWords(decl, func(n ast.Node) {
				at := fset.Position(n.Pos())
				where := filepath.Base(at.Filename) + ":" + strconv.Itoa(at.Line)
				switch n := n.(type) {
				case *ast.BasicLit:
					s, err := strconv.Unquote(n.Value)
					if err != nil || !(sentence.MatchString(s) || inner.MatchString(s)) || notWords[s] {
						return
					}
					t.Errorf("%s: %q is English written in code; give it a console.rest.* id (console-rest.en.json)", where, s)
				case *ast.KeyValueExpr:
					if key, ok := n.Key.(*ast.Ident); ok && wordFields[key.Name] && words(n.Value) {
						t.Errorf("%s: a page's %s written in code; give it a console.rest.* id", where, key.Name)
					}
				case *ast.AssignStmt:
					for i, lhs := range n.Lhs {
						if sel, ok := lhs.(*ast.SelectorExpr); ok && wordFields[sel.Sel.Name] && i < len(n.Rhs) && words(n.Rhs[i]) {
							t.Errorf("%s: a page's %s written in code; give it a console.rest.* id", where, sel.Sel.Name)
						}
					}
					// A field's error, however short ("required").
					for i, lhs := range n.Lhs {
						if ix, ok := lhs.(*ast.IndexExpr); ok && i < len(n.Rhs) && isIdent(ix.X, "errs") && words(n.Rhs[i]) {
							t.Errorf("%s: a field's error written in code; give it a console.rest.* id", where)
						}
					}
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok || len(n.Args) > 0 {
						return
					}
					if controlplaneWords[sel.Sel.Name] && !(sel.Sel.Name == "Label" && labelFallbacks[fn]) {
						t.Errorf("%s: %s() is English from another package; show the console's catalogue words instead", where, sel.Sel.Name)
					}
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == "controlplane" && n.Sel.Name == "ApproverRolesProblem" {
						t.Errorf("%s: controlplane.ApproverRolesProblem is the API's English; the form says the console's", where)
					}
				}
			})
		}
	}
}

// sentence is a string that reads as words for a person: a word, then a
// space, comma or colon, then more words ("choose stage 3, 4 or 5", " is
// signed out everywhere").
var sentence = regexp.MustCompile(`^\s*[A-Za-z][a-z]*[ ,:].*[a-z]`)

// inner is a format or a piece holding a word between spaces: "%s (%s
// of %s)".
var inner = regexp.MustCompile(`\s[a-z]{2,}\s`)

// wordFields are the fields of pages' models and replies that hold words
// for people, however short ("never", "passed"), beside labelFields.
var wordFields = map[string]bool{"Heading": true, "Button": true, "Refused": true, "Ends": true, "Summary": true,
	"Description": true, "Detail": true, "Failing": true, "Soonest": true, "LastUsed": true, "Owner": true,
	"ReviewOn": true, "Deadlines": true, "TakenOver": true, "Why": true, "Route": true, "Change": true,
	"Error": true, "Message": true, "Hint": true, "Errors": true}

// controlplaneWords are methods whose English is controlplane's or
// accounts' (the API's, the assistant's), not the console's catalogue's.
var controlplaneWords = map[string]bool{"Label": true, "Sentence": true, "DecidersWords": true}

// labelFallbacks are the functions that show a value's Label only for a
// value the catalogue does not name.
var labelFallbacks = map[string]bool{"stateWords": true}

// notWords are strings in the console's code that read like words but no
// person reads on a page.
var notWords = map[string]bool{
	"task events":                        true, // the fan-out's name, in log lines
	"countersign new key flash\x00":      true, // a hash's domain separator
	"retry: 1000\nevent: change\ndata: ": true, // SSE protocol
	"event: change\ndata: ":              true, // SSE protocol
	"\n\n: watching\n\n":                 true, // an SSE comment, read by no one
	": still here\n\n":                   true, // an SSE comment, read by no one
}

// inspectWords walks n and calls check on every string, call and
// selector a page might show, skipping what no person reads on a page:
// log lines, error values no page shows (fmt.Errorf, errors.New, an
// apperr.Internal's words), struct tags, and the catalogue's own helpers'
// ids.
func inspectWords(n ast.Node, check func(ast.Node)) {
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case nil:
			return false
		case *ast.Field:
			if n.Type != nil {
				inspectWords(n.Type, check)
			}
			return false
		case *ast.CallExpr:
			switch name := calleeName(n); {
			case strings.HasPrefix(name, "h.Log.") || strings.HasPrefix(name, "slog.") || strings.HasPrefix(name, "log."),
				name == "fmt.Errorf", name == "errors.New":
				return false
			case name == "apperr.New" && len(n.Args) > 0 && isSelector(n.Args[0], "apperr", "Internal"):
				// An internal error's words reach the logs; its page says
				// only that something went wrong.
				return false
			case name == "say" || name == "sayN" || name == "title" || name == "locale.Console" || name == "locale.ConsoleN":
				for _, a := range n.Args[1:] {
					inspectWords(a, check)
				}
				return false
			}
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.SelectorExpr); ok && x.Sel.Name == "Log" {
					return false
				}
			}
		}
		check(n)
		return true
	})
}

func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && isIdent(sel.X, pkg) && sel.Sel.Name == name
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// calleeName is a call's function as written: "say", "h.Log.Warn",
// "fmt.Errorf".
func calleeName(c *ast.CallExpr) string {
	var parts []string
	e := c.Fun
	for {
		switch x := e.(type) {
		case *ast.Ident:
			parts = append([]string{x.Name}, parts...)
			return strings.Join(parts, ".")
		case *ast.SelectorExpr:
			parts = append([]string{x.Sel.Name}, parts...)
			e = x.X
		default:
			return strings.Join(parts, ".")
		}
	}
}
