package controlplane

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEventActionsAreOneVocabulary holds the list to its constants: no
// name twice, and every event recorded by composing a state's name is one
// of them (internal/handoffs checks its outcomes' the same way).
func TestEventActionsAreOneVocabulary(t *testing.T) {
	seen := map[EventAction]bool{}
	for _, a := range EventActions {
		if seen[a] {
			t.Errorf("%s is listed twice", a)
		}
		seen[a] = true
	}
	for _, s := range States {
		if s != Dispatching && !seen[s.entered()] {
			t.Errorf("state %s is recorded as %s, which EventActions lacks", s, s.entered())
		}
	}
	for _, s := range []TaskState{TaskActive, TaskPaused, TaskCancelled, TaskClosed} {
		if !seen[s.entered()] {
			t.Errorf("task state %s is recorded as %s, which EventActions lacks", s, s.entered())
		}
	}
}

// TestEventNamesOutsideGoAreKnown reads the names that code which may not
// import this package writes by hand — the store's and the bench's SQL,
// the migrations, the pages' templates — and wants each in EventActions.
func TestEventNamesOutsideGoAreKnown(t *testing.T) {
	prefixes := map[string]bool{}
	for _, a := range EventActions {
		prefix, _, _ := strings.Cut(string(a), ".")
		prefixes[prefix] = true
	}
	name := regexp.MustCompile(`['"]((` + strings.Join(slices.Sorted(maps.Keys(prefixes)), "|") + `)\.[a-z_]+)['"]`)
	var files []string
	for _, glob := range []string{"../../store/*.go", "../../internal/bench/*.go", "../../migrations/*.sql", "../../views/*.templ"} {
		matched, err := filepath.Glob(glob)
		if err != nil || len(matched) == 0 {
			t.Fatalf("%s matches nothing (%v)", glob, err)
		}
		files = append(files, matched...)
	}
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range name.FindAllStringSubmatch(string(src), -1) {
			found++
			if !slices.Contains(EventActions, EventAction(m[1])) {
				t.Errorf("%s writes the event name %q, which EventActions lacks", f, m[1])
			}
		}
	}
	if found < 10 {
		t.Fatalf("found only %d event names outside Go's constants; is the pattern right?", found)
	}
}
