package depcheck_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"countersign/internal/shopadapter"
)

// shopKnowers are the folders whose production code may name the shop's
// actions, and why: what an action is lives in its adapter
// (docs/architecture.md, "Words": action), so everyone else reads it from the action's spec.
var shopKnowers = map[string]string{
	"internal/shopadapter": "the shop's adapter defines its actions",
	"internal/demoshop":    "the demo shop is the system the actions act on",
	"internal/demo":        "the demo seeds the shop and plays its scenes",
	"cmd/demoshop":         "the demo shop's program",
	"internal/assistantsim": "the scripted assistant is example code that plays a conversation against the demo shop, " +
		"as an assistant built for that shop would",
}

// TestNoShopActionNamedOutsideTheShop fails on a string literal naming one
// of the shop adapter's actions in production code outside shopKnowers: a
// table keyed by action name elsewhere is knowledge of the action kept
// away from its adapter, which a file-described action of the same name
// would silently inherit. Tests and test helpers may name them.
func TestNoShopActionNamedOutsideTheShop(t *testing.T) {
	var names []string
	for _, a := range shopadapter.New(shopadapter.Config{}).Actions() {
		names = append(names, regexp.QuoteMeta(a.Name))
	}
	if len(names) == 0 {
		t.Fatal("the shop adapter has no actions")
	}
	named := regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if _, ok := shopKnowers[rel]; ok || testHelper(rel) || base == "testdata" || (strings.HasPrefix(base, ".") && rel != ".") {
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
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if m := named.FindString(lit.Value); m != "" {
					pos := fset.Position(lit.Pos())
					t.Errorf("%s:%d names the shop's action %s; give what it knows of the action to adapter.ActionSpec and read it from there",
						rel, pos.Line, m)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, "issue_refund") {
		t.Errorf("the shop adapter's actions %v do not include issue_refund; is this the shop?", names)
	}
}
