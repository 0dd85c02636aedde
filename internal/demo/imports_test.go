package demo_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestProductionNeverImportsTheDemo lists every package of the module with
// its dependencies (test files aside) and fails when one other than the
// demo itself, the programs under cmd/ and the test-helper packages
// (names ending in "test") reaches this package, directly
// or through another package: the demo seeds through production code,
// never the other way round.
func TestProductionNeverImportsTheDemo(t *testing.T) {
	const self = "countersign/internal/demo"
	out, err := exec.Command("go", "list", "-json=ImportPath,Deps", "countersign/...").Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go list: %v\n%s", err, exit.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var wired []string
	for {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.ImportPath == self || !slices.Contains(p.Deps, self) {
			continue
		}
		if strings.HasPrefix(p.ImportPath, "countersign/cmd/") {
			wired = append(wired, p.ImportPath)
			continue
		}
		// A test-helper package (web/webtest loads the demo's history) is
		// not production code: internal/depcheck fails on any production
		// package that imports one.
		if strings.HasSuffix(p.ImportPath, "test") {
			continue
		}
		t.Errorf("%s depends on %s: production code must not reach the demo (let cmd/ wire it)", p.ImportPath, self)
	}
	// The listing sees the demo's one rightful user, or it proves nothing.
	if !slices.Contains(wired, "countersign/cmd/countersign") {
		t.Errorf("cmd/countersign does not depend on %s per go list (programs that do: %v)", self, wired)
	}
}
