package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/adapter/conformance"
)

// orders is a system with one read tool, get_order, that reads
// /orders/{order_id}; checked says whether its argument is a path
// segment (adapter.Param.PathSegment). It sends with its own client, not
// adapter.Exchange, as an adapter written from scratch might.
type orders struct {
	adapter.System // the methods the check does not call
	base           string
	client         *http.Client
	checked        bool
}

func (o *orders) ReadTools() []adapter.ReadToolSpec {
	return []adapter.ReadToolSpec{{Name: "get_order", Params: []adapter.Param{
		{Name: "order_id", Type: "string", Required: true, PathSegment: o.checked}}}}
}

func (o *orders) Actions() []adapter.ActionSpec { return nil }

func (o *orders) Read(ctx context.Context, _ adapter.Principal, tool string, raw json.RawMessage) (adapter.ReadResult, error) {
	args, err := o.ReadTools()[0].Validate(raw)
	if err != nil {
		return adapter.ReadResult{}, err
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, o.base+"/orders/"+url.PathEscape(args["order_id"].(string)), nil)
	res, err := o.client.Do(req)
	if err != nil {
		return adapter.ReadResult{}, err
	}
	res.Body.Close()
	return adapter.ReadResult{}, nil
}

// recorder is a conformance.T that keeps failures instead of failing.
type recorder struct {
	*testing.T
	mu       sync.Mutex
	problems []string
}

func (r *recorder) Error(args ...any) { r.add(fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) {
	r.add(fmt.Sprintf(format, args...))
}
func (r *recorder) Fatal(args ...any) { r.add(fmt.Sprint(args...)); runtime.Goexit() }
func (r *recorder) Fatalf(format string, args ...any) {
	r.add(fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (r *recorder) add(s string) { r.mu.Lock(); r.problems = append(r.problems, s); r.mu.Unlock() }

// TestPathArgumentsStayInPlaceFailsAnAdapterThatLetsThemThrough: an
// adapter that puts a read tool's argument into a path unchecked fails
// the check (GET /orders/.. reached the system, and the argument was not
// refused); the same adapter declaring the argument a path segment passes.
func TestPathArgumentsStayInPlaceFailsAnAdapterThatLetsThemThrough(t *testing.T) {
	t.Parallel()
	var check conformance.Check
	for _, c := range conformance.Checks() {
		if c.Name == "path_arguments_stay_in_place" {
			check = c
		}
	}
	if check.Name == "" {
		t.Fatal("the suite has no check path_arguments_stay_in_place")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
	t.Cleanup(srv.Close)
	fix := conformance.Fixture{Principal: adapter.Principal{CustomerRef: "jordan@example.com"},
		Reads: []conformance.Read{{Tool: "get_order", Args: map[string]any{"order_id": "ord_1"}}}}
	run := func(checked bool) []string {
		rec := &recorder{T: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			e := conformance.Start(rec, func(_ conformance.T, tr http.RoundTripper) conformance.Backend {
				return conformance.Backend{System: &orders{base: srv.URL, client: &http.Client{Transport: tr}, checked: checked},
					Effects: func(conformance.T, string) int { return 0 }}
			}, fix)
			e.Run(rec, check, "paths")
		}()
		<-done
		return rec.problems
	}
	problems := strings.Join(run(false), "\n")
	for _, want := range []string{`args.order_id = ".." reached the system as GET /orders/..,`, `args.order_id = "a/b" goes into a path but was not refused`} {
		if !strings.Contains(problems, want) {
			t.Errorf("the unchecked adapter: no problem saying %s; problems:\n%s", want, problems)
		}
	}
	if problems := run(true); len(problems) != 0 {
		t.Errorf("the adapter that declares its path segment fails the check: %v", problems)
	}
}
