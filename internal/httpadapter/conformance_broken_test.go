package httpadapter_test

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"countersign/internal/adapter/adaptertest"
	"countersign/internal/adapter/conformance"
)

// recordingT is a conformance.T that records failures instead of failing
// the test, so that a test can ask that a check fails.
type recordingT struct {
	*testing.T
	mu       sync.Mutex
	problems []string
}

func (r *recordingT) Error(args ...any) { r.record(fmt.Sprint(args...)) }
func (r *recordingT) Errorf(format string, args ...any) {
	r.record(fmt.Sprintf(format, args...))
}
func (r *recordingT) Fatal(args ...any) { r.record(fmt.Sprint(args...)); runtime.Goexit() }
func (r *recordingT) Fatalf(format string, args ...any) {
	r.record(fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (r *recordingT) record(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, s)
}

// runCheck runs one conformance check against setup and returns its
// problems (none when it passed).
func runCheck(t *testing.T, name string, setup adaptertest.Setup, fix adaptertest.Fixture) []string {
	t.Helper()
	rt := &recordingT{T: t}
	var check *conformance.Check
	for _, c := range conformance.Checks() {
		if c.Name == name {
			check = &c
		}
	}
	if check == nil {
		t.Fatalf("the suite has no check %s", name)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		e := conformance.Start(rt, func(_ conformance.T, tr http.RoundTripper) conformance.Backend {
			b := setup(t, tr)
			return conformance.Backend{System: b.System,
				Effects: func(_ conformance.T, key string) int { return b.Effects(t, key) },
				Fault:   func(_ conformance.T, f adaptertest.Fault) { b.Fault(t, f) }}
		}, fix)
		e.Run(rt, *check, "broken")
	}()
	<-done
	return rt.problems
}

// TestConformanceFailsBrokenExamples: the suite fails the mutations of
// testdata/example/pocketbase.json the README lists, each in the check
// that should catch it: a verify condition with the wrong sign, and
// effects read without their paging (the withdrawal's effect is on the
// second page, so a lost answer is not found again).
func TestConformanceFailsBrokenExamples(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/example/pocketbase.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, old, new, check string
	}{
		{"verify.expect with the wrong sign", "before.balance_cents - args.amount_cents", "before.balance_cents + args.amount_cents", "verify_by_read_back"},
		{"effects without their paging", `"paging": {"page_param": "page", "total_pages": "/totalPages"},
    "id": "/id"`, `"id": "/id"`, "fault_drop_after_commit_is_unknown_and_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(string(raw), tc.old) {
				t.Fatalf("pocketbase.json has no %s", tc.old)
			}
			file := t.TempDir() + "/pocketbase.json"
			if err := os.WriteFile(file, []byte(strings.Replace(string(raw), tc.old, tc.new, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			if problems := runCheck(t, tc.check, pbBackend(file), pbFixture()); len(problems) == 0 {
				t.Errorf("%s passed on the broken file", tc.check)
			} else {
				t.Logf("%s fails as it should: %s", tc.check, problems[0])
			}
			if problems := runCheck(t, tc.check, pbBackend("testdata/example/pocketbase.json"), pbFixture()); len(problems) != 0 {
				t.Errorf("%s fails on the intact file: %v", tc.check, problems)
			}
		})
	}
}
