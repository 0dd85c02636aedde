package depcheck_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// rule forbids every package that from matches to depend, directly or
// through others, on a package that to matches.
type rule struct {
	from, to string // a path, or a path ending in "/..." for it and everything under it
	why      string
}

// rules are the layers of docs/architecture.md ("Layers"): dependencies
// point one way, cmd → web → internal domain → store; views know nothing of
// the store; production code never imports the demo (internal/demo's own test
// checks the last). Inside web, the audiences (web/api, web/customer,
// web/console) know only the shared plumbing (web/kit) and, for the pages
// people read, their frame (web/layout); web alone assembles them. Test files are not checked: a domain package's test may
// serve the console (internal/assistantsim's does), and every test may use
// store/dbtest. A test-helper package (its name ends in "test", like
// shoptest or browsertest) is held to the layers like production code, so
// store/dbtest may not reach into internal/, but it may use store/dbtest and
// other test helpers; no production package may import one. The console's
// lists (internal/lists) read above the control plane and beside the other
// services: web → lists → controlplane → store. Hand-offs (internal/handoffs)
// are a client of the control plane's proposal door: web → handoffs →
// controlplane → store, and the control plane never knows them.
var rules = []rule{
	{"countersign/internal/...", "countersign/web/...", "the domain does not know the HTTP side"},
	{"countersign/internal/...", "countersign/views", "the domain does not know the pages"},
	{"countersign/store/...", "countersign/internal/...", "the store is the bottom layer, its test helpers and the embedded PostgreSQL too"},
	{"countersign/store/...", "countersign/web/...", "the store is the bottom layer"},
	{"countersign/store/...", "countersign/views", "the store is the bottom layer"},
	{"countersign/internal/adapter", "countersign/store", "the adapter contract declares the storage it needs (LedgerStore)"},
	{"countersign/views", "countersign/store", "views take view models, not rows"},
	{"countersign/views", "countersign/internal/...", "views take view models, not domain types"},
	{"countersign/web/api", "countersign/views", "the assistant's API serves JSON and links none of the pages people read"},
	{"countersign/web/api", "countersign/web/layout", "the assistant's API draws no page"},
	{"countersign/web/kit", "countersign/views", "the shared plumbing knows no page, so the API that imports it links none"},
	{"countersign/web/kit", "countersign/web/layout", "the shared plumbing is below the pages' frame"},
	{"countersign/web/kit", "countersign/web/api", "the shared plumbing is below every audience"},
	{"countersign/web/kit", "countersign/web/customer", "the shared plumbing is below every audience"},
	{"countersign/web/kit", "countersign/web/console", "the shared plumbing is below every audience"},
	{"countersign/web/layout", "countersign/web/api", "the pages' frame is below every audience"},
	{"countersign/web/layout", "countersign/web/customer", "the pages' frame is below every audience"},
	{"countersign/web/layout", "countersign/web/console", "the pages' frame is below every audience"},
	{"countersign/web/api", "countersign/web/customer", "each audience is a package of its own; only web assembles them"},
	{"countersign/web/api", "countersign/web/console", "each audience is a package of its own; only web assembles them"},
	{"countersign/web/customer", "countersign/web/api", "each audience is a package of its own; only web assembles them"},
	{"countersign/web/customer", "countersign/web/console", "each audience is a package of its own; only web assembles them"},
	{"countersign/web/console", "countersign/web/api", "each audience is a package of its own; only web assembles them"},
	{"countersign/web/console", "countersign/web/customer", "each audience is a package of its own; only web assembles them"},
	{"countersign/web/api", "countersign/web/slackhook", "the assistant's API never serves Slack's clicks: an assistant must not reach a person's decision"},
	{"countersign/web/slackhook", "countersign/web/api", "Slack's address is an audience of its own; only web assembles them"},
	{"countersign/web/slackhook", "countersign/web/console", "Slack's address is an audience of its own; only web assembles them"},
	{"countersign/web/slackhook", "countersign/web/customer", "Slack's address is an audience of its own; only web assembles them"},
	{"countersign/web/slackhook", "countersign/views", "Slack's address answers Slack in JSON and draws no page"},
	{"countersign/internal/slackbot", "countersign/internal/fakeslack", "the fake Slack is for tests and the demo; the bot talks to whatever Slack it is pointed at"},
	{"countersign/internal/controlplane", "countersign/internal/lists",
		"the state machine reads what a decision needs itself; the console's lists read beside it, for pages"},
	{"countersign/internal/controlplane", "countersign/internal/handoffs",
		"the control plane is the invocation journal; hand-offs are a client of its proposal door, never a part of it"},
	{"countersign/internal/lists", "countersign/internal/confirmation", "the lists read the store in the control plane's terms, no other service"},
	{"countersign/internal/lists", "countersign/internal/assistants", "the lists read the store in the control plane's terms, no other service"},
	{"countersign/internal/lists", "countersign/internal/accounts", "the lists read the store in the control plane's terms, no other service"},
	{"countersign/...", "countersign/store/dbtest", "the test database is for tests only"},
	{"countersign/...", "countersign/.../*test", "test helpers are for tests only"},
}

// leaves are packages of pure functions on text that import no package of
// this module, so every layer may use them without reaching another layer:
// internal/invisible finds the characters a person cannot see, which the
// adapter contract refuses in arguments and the views show as marks.
// TestLeavesImportNothingOfOurs holds them to that.
var leaves = []string{"countersign/internal/invisible"}

// catalogues is the package every word of a customer's page comes from
// (locale.T, locale.N, locale.Money, locale.When): the views may use it and
// what it imports, though it is no leaf (it writes amounts through
// internal/money), since a template carries message ids, not sentences.
const catalogues = "countersign/internal/locale"

// viewsMayUse says whether from, a package of the views, may reach dep
// through the catalogues.
func viewsMayUse(pkgs map[string]pkg, from, dep string) bool {
	if from != "countersign/views" {
		return false
	}
	return dep == catalogues || slices.Contains(pkgs[catalogues].Deps, dep)
}

// testHelper says whether path is a test-helper package.
func testHelper(path string) bool {
	return strings.HasSuffix(path[strings.LastIndex(path, "/")+1:], "test")
}

func matches(pattern, path string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "/.../*test"); ok {
		return strings.HasPrefix(path, prefix+"/") && testHelper(path)
	}
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == prefix || strings.HasPrefix(path, prefix+"/")
	}
	return path == pattern
}

// pkg is what go list says of one package: its direct imports and every
// package it depends on. Test files are not part of either.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
	// Error is set when go list could not load the package (an import
	// cycle leaves Deps incomplete).
	Error *struct{ Err string }
}

func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Deps,Error", "countersign/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		if p.Error != nil {
			t.Errorf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; is the test run inside the module?", len(pkgs))
	}
	return pkgs
}

// TestDependenciesPointOneWay fails on any import outside test files that
// breaks a rule, naming the direct import through which the forbidden package is
// reached.
func TestDependenciesPointOneWay(t *testing.T) {
	pkgs := listPackages(t)
	paths := slices.Sorted(maps.Keys(pkgs))
	for _, r := range rules {
		for _, path := range paths {
			p := pkgs[path]
			// A test helper may use what is for tests only; every other
			// rule holds for it as for production code.
			if !matches(r.from, p.ImportPath) || testHelper(p.ImportPath) && testHelper(r.to) {
				continue
			}
			for _, d := range p.Deps {
				if !matches(r.to, d) || d == p.ImportPath || slices.Contains(leaves, d) || viewsMayUse(pkgs, p.ImportPath, d) {
					continue
				}
				t.Errorf("%s depends on %s%s: %s", p.ImportPath, d, through(pkgs, p, d), r.why)
			}
		}
	}
}

// through names the direct import of p that brings in dep, when dep is not
// imported directly.
func through(pkgs map[string]pkg, p pkg, dep string) string {
	if slices.Contains(p.Imports, dep) {
		return ""
	}
	for _, imp := range p.Imports {
		if slices.Contains(pkgs[imp].Deps, dep) {
			return " (through " + imp + ")"
		}
	}
	return ""
}

// TestLeavesImportNothingOfOurs fails when a package allowed everywhere as
// a leaf starts to depend on another package of this module, which would
// let the layers reach each other through it.
func TestLeavesImportNothingOfOurs(t *testing.T) {
	pkgs := listPackages(t)
	for _, leaf := range leaves {
		p, ok := pkgs[leaf]
		if !ok {
			t.Errorf("leaf %s is not a package of the module", leaf)
			continue
		}
		for _, d := range p.Deps {
			if matches("countersign/...", d) {
				t.Errorf("leaf %s depends on %s: a leaf imports nothing of this module", leaf, d)
			}
		}
	}
}
