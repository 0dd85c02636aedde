package depcheck_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/text/language"

	"countersign/internal/locale"
)

// catalogueFixtures are English messages no page shows, kept on purpose,
// and why.
var catalogueFixtures = map[string]string{
	"decision.recorded":      "the catalogue tests' example of a message with a parameter",
	"order.items":            "the catalogue tests' example of a counted message in every shipped language",
	"language.switch.submit": "the catalogue tests' example of a message an override leaves alone",
}

// TestEveryCatalogueMessageIsShownByCode fails on an English message that
// no production code names: a text every language must translate (and a
// language an installation adds must hold before it is offered) that no
// page, mail or quote shows. An id counts as named when a string literal
// outside the tests is the id, or code joins it at a dot: a literal and
// the right of a concatenation or of a += (key + ".title", key being
// "receipt.mail_link.expired"; id += "_why"), or the left of a
// concatenation ending at a dot and words or a named rest ("pages.badge."
// + state, "console.labels.metric." + id + "." + part, "shop." +
// "refund.window." + what): the ids code builds from a state or a reason.
func TestEveryCatalogueMessageIsShownByCode(t *testing.T) {
	c := literals(t, filepath.Join("..", ".."))
	var unused []string
	for _, m := range locale.Shipped().Messages(language.English) {
		if _, ok := catalogueFixtures[m.ID]; ok {
			if c.lits[m.ID] {
				t.Errorf("%s is named by code now: remove it from catalogueFixtures", m.ID)
			}
			continue
		}
		if !named(m.ID, c) {
			unused = append(unused, m.ID)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("%d English messages are shown by no code; remove them from every language's catalogue file:\n%s",
			len(unused), strings.Join(unused, "\n"))
	}
}

// words are the segments of an id that code fills in from values: a
// state, or a metric's id and one of its parts.
var words = regexp.MustCompile(`^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$`)

// named reports whether id is a literal, a literal and the right of a
// concatenation at a dot, or a stem followed by one word or by what is
// itself named.
func named(id string, c code) bool {
	if c.lits[id] {
		return true
	}
	for i := 1; i < len(id); i++ {
		head, rest := id[:i], id[i:]
		if c.lits[head] && c.tailed(rest) && (strings.HasSuffix(head, ".") || strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, "_")) {
			return true
		}
		if !strings.HasSuffix(head, ".") {
			continue
		}
		if c.stems[head] && (words.MatchString(rest) || named(rest, c)) {
			return true
		}
	}
	return false
}

// code is what the production code's string literals can make an id of:
// every literal, the stems (the left of a concatenation) and the tails
// (its right).
type code struct{ lits, stems, tails map[string]bool }

// tailed reports whether rest is one tail or several in a row (id +=
// "_why", then id += "_blocked").
func (c code) tailed(rest string) bool {
	if c.tails[rest] {
		return true
	}
	for j := 1; j < len(rest); j++ {
		if c.tails[rest[:j]] && c.tailed(rest[j:]) {
			return true
		}
	}
	return false
}

// literals are the string literals of the production code under root,
// tests and test helpers left out.
func literals(t *testing.T, root string) code {
	t.Helper()
	c := code{lits: map[string]bool{}, stems: map[string]bool{}, tails: map[string]bool{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if testHelper(rel) || base == "testdata" || base == "node_modules" || (strings.HasPrefix(base, ".") && rel != ".") {
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
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, ok := stringLit(n); ok {
					c.lits[s] = true
				}
			case *ast.AssignStmt:
				// id += "_why": a tail too.
				if n.Tok == token.ADD_ASSIGN && len(n.Rhs) == 1 {
					if lit, ok := n.Rhs[0].(*ast.BasicLit); ok {
						if s, ok := stringLit(lit); ok {
							c.tails[s] = true
						}
					}
				}
			case *ast.BinaryExpr:
				if n.Op != token.ADD {
					break
				}
				if lit, ok := n.X.(*ast.BasicLit); ok {
					if s, ok := stringLit(lit); ok {
						c.stems[s] = true
					}
				}
				if lit, ok := n.Y.(*ast.BasicLit); ok {
					if s, ok := stringLit(lit); ok {
						c.tails[s] = true
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func stringLit(lit *ast.BasicLit) (string, bool) {
	if lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
