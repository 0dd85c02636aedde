// Package conformance is the adapter conformance suite: the checks any
// adapter.System must pass against a real backend, in the spirit of the
// database/sql driver tests. Go tests run it through adaptertest.Run (a
// fresh backend per check, in parallel); `countersign conformance` runs it
// against a live system with RunLive (one system, the checks one after
// another, each with keys of its own, the suite's fault proxy in front).
//
// The checks: the specs are complete; Resolve finds the principal's own
// object, refuses an ambiguous reference with its candidates and another
// customer's object as not found; a dry run has no side effect; Execute
// sends once per key (a repeat is deduplicated and the backend records one
// effect); Verify finds the change by reading back; Lookup finds an
// earlier call and reports an unknown key as such; a 5xx answer, a reset
// and a dropped answer after commit are Unknown (and Lookup finds the
// committed one), a write that could not be dialled is NotSent, a 4xx
// answer is Refused; no internal field leaves the adapter; changing any
// argument of any write action changes its quote, a string argument
// with an invisible or direction-changing character is refused, and no
// argument of an action or read tool moves a URL path ("..", "a/b").
package conformance

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"countersign/internal/adapter"
)

// T is what a check uses of the test it runs in: *testing.T has it, and
// so does the recorder RunLive runs each check with. Fatal and Fatalf end
// the check (runtime.Goexit), as in a test.
type T interface {
	Helper()
	Error(args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
	Context() context.Context
}

// Fault is a failure the backend injects into the next write.
type Fault string

// The faults a Backend must be able to inject.
const (
	// FaultServerError: the write is answered 5xx without being applied.
	FaultServerError Fault = "server_error"
	// FaultReset: the connection is reset without an answer; nothing applied.
	FaultReset Fault = "reset"
	// FaultDropAfterCommit: the write is applied, then the connection is
	// closed without an answer.
	FaultDropAfterCommit Fault = "drop_after_commit"
)

// Backend is the system under test with the adapter connected to it.
type Backend struct {
	// System is the adapter under test. Its HTTP requests must go through
	// the transport it was connected with, and it must use a request ledger.
	System adapter.System
	// Effects counts the effects the backend itself recorded under key, or
	// in total when key is "". It must not go through System.
	Effects func(t T, key string) int
	// Fault makes the backend fail the next request of Fixture.Write's
	// action as f.
	Fault func(t T, f Fault)
}

// Connect connects the adapter under test to a backend, sending its HTTP
// through transport.
type Connect func(t T, transport http.RoundTripper) Backend

// Reference is a reference to an object of a kind, and the id it must
// resolve to ("" accepts any).
type Reference struct {
	Kind, Ref, WantID string
}

// Call is an action with its arguments, made for Principal (the
// fixture's Principal when empty).
type Call struct {
	Principal adapter.Principal
	Action    string
	Args      any
}

// Answer is an error answer of the system, as status and body.
type Answer struct {
	Status int
	Body   string
	// WantCode is the adapter.Error code the adapter must map it to.
	WantCode string
}

// Read is a read tool and its arguments.
type Read struct {
	Tool string
	Args any
}

// Fixture describes the objects and principals the checks use.
type Fixture struct {
	// Principal is the customer the checks act for; Other is another.
	Principal, Other adapter.Principal
	// Resolve names exactly one of Principal's objects.
	Resolve Reference
	// Ambiguous matches two or more of Principal's objects.
	Ambiguous Reference
	// Foreign names one of Other's objects (resolved as Other); Principal
	// must not find it.
	Foreign Reference
	// Write is an action that succeeds, records exactly one effect in the
	// backend, and verifies.
	Write Call
	// Refused is an action the dry run refuses (Outcome Refused).
	Refused Call
	// Refusal is a 4xx answer the system gives a write, and its code.
	Refusal Answer
	// Reads are read tools to run, all of whose answers are checked.
	Reads []Read
	// Forbidden are strings no answer of the adapter may contain (field
	// names of internal data); nil means DefaultForbidden.
	Forbidden []string
	// Every holds a valid call of each write action of the system, for the
	// checks that every argument shows in the quote and that hidden
	// characters are refused; an action missing here fails them.
	Every []Varied
}

// DefaultForbidden are the internal fields of a typical business system.
var DefaultForbidden = []string{"risk_score", "fraud_flag", "internal_notes", "case_notes", "margin_cents", "cost_cents",
	"supplier_notes", "processor_"}

// mode says what the suite's transport does with a write.
type mode int

const (
	pass mode = iota
	dialDead
	refuse
)

// transport forwards reads; writes are forwarded, dialled to an address
// nothing listens on, or answered with the fixture's refusal unsent.
type transport struct {
	mode    mode
	live    http.RoundTripper
	dead    http.RoundTripper
	refusal Answer

	mu   sync.Mutex
	sent []string // "GET /orders/ord_1", as sent, while recording
	rec  bool
}

// record starts keeping what is sent, forgetting what was kept.
func (tr *transport) record() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.rec, tr.sent = true, nil
}

// recorded stops keeping what is sent and returns it.
func (tr *transport) recorded() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.rec = false
	return tr.sent
}

func (tr *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	tr.mu.Lock()
	if tr.rec {
		tr.sent = append(tr.sent, r.Method+" "+r.URL.EscapedPath())
	}
	tr.mu.Unlock()
	if tr.mode == pass || isRead(r) {
		return tr.live.RoundTrip(r)
	}
	if tr.mode == dialDead {
		return tr.dead.RoundTrip(r)
	}
	if r.Body != nil {
		r.Body.Close()
	}
	return &http.Response{StatusCode: tr.refusal.Status, Status: http.StatusText(tr.refusal.Status), Proto: "HTTP/1.1",
		ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(tr.refusal.Body)), Request: r}, nil
}

// Env is a backend with the suite's transport in front of it, that
// checks run against.
type Env struct {
	Backend
	tr  *transport
	fix Fixture
	// keys prefixes every idempotency key a check uses.
	keys string
}

// Start builds the suite's transport (it dials a dead address or answers
// with the fixture's refusal when a check says so) and connects the
// adapter through it.
func Start(t T, connect Connect, fix Fixture) *Env {
	t.Helper()
	return start(t, connect, fix, nil)
}

func start(t T, connect Connect, fix Fixture, wrap func(http.RoundTripper) http.RoundTripper) *Env {
	t.Helper()
	if fix.Forbidden == nil {
		fix.Forbidden = DefaultForbidden
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := ln.Addr().String()
	ln.Close()
	var d net.Dialer
	live := &http.Transport{Proxy: http.ProxyFromEnvironment}
	dead := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, deadAddr)
	}}
	t.Cleanup(live.CloseIdleConnections)
	tr := &transport{live: live, dead: dead, refusal: fix.Refusal}
	if wrap != nil {
		tr.live = wrap(live)
	}
	b := connect(t, tr)
	return &Env{Backend: b, tr: tr, fix: fix, keys: "conformance"}
}

// key is the idempotency key a check calls name ("1", "never-sent").
func (e *Env) key(name string) string { return e.keys + "-" + name }

func principal(fix Fixture, c Call) adapter.Principal {
	if c.Principal.CustomerRef != "" {
		return c.Principal
	}
	return fix.Principal
}

func raw(t T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ctx(t T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// dryRun previews c, which must succeed, and returns the call to execute.
func (e *Env) dryRun(t T, c Call, key string) adapter.Call {
	t.Helper()
	q, err := e.System.DryRun(ctx(t), principal(e.fix, c), c.Action, raw(t, c.Args))
	if err != nil {
		t.Fatalf("dry run %s: %v", c.Action, err)
	}
	return adapter.Call{Action: c.Action, Args: raw(t, c.Args), IdempotencyKey: key, Quote: q}
}

// wantError asserts err is an *adapter.Error with outcome (and code when
// not empty), with a message.
func wantError(t T, err error, code string, outcome adapter.Outcome) *adapter.Error {
	t.Helper()
	ae, ok := adapter.AsError(err)
	if !ok {
		t.Fatalf("error %v (%T), want an *adapter.Error %s/%s", err, err, code, outcome)
	}
	if (code != "" && ae.Code != code) || ae.Outcome != outcome {
		t.Fatalf("error %s/%s (%s), want %s/%s", ae.Code, ae.Outcome, ae.Message, code, outcome)
	}
	if ae.Message == "" {
		t.Errorf("error %s has no message", ae.Code)
	}
	return ae
}
