package depcheck_test

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"testing"
)

// depguardDeny matches a package the linter's depguard rules deny.
var depguardDeny = regexp.MustCompile(`(?m)^\s*- pkg: (\S+)\s*$`)

// TestDepguardRefusesEveryTestHelper fails when a test-helper package (a name
// ending in "test", like web/webtest) is missing from the packages the
// linter's depguard rules deny, so that an editor flags a production file
// importing it at once, not only this package's TestDependenciesPointOneWay.
func TestDepguardRefusesEveryTestHelper(t *testing.T) {
	b, err := os.ReadFile("../../.golangci.yaml")
	if err != nil {
		t.Fatal(err)
	}
	denied := map[string]bool{}
	for _, m := range depguardDeny.FindAllStringSubmatch(string(b), -1) {
		denied[m[1]] = true
	}
	pkgs := listPackages(t)
	for _, path := range slices.Sorted(maps.Keys(pkgs)) {
		if testHelper(path) && !denied[path] {
			t.Errorf("%s is a test helper but .golangci.yaml's depguard rule test-helpers-for-tests does not deny it", path)
		}
	}
}
