package conformance

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"countersign/internal/adapter"
)

// LiveBackend is a live system with the adapter under test connected to it.
type LiveBackend struct {
	// System is the adapter under test, sending its HTTP through the
	// transport RunLive gave; it must use a request ledger.
	System adapter.System
	// Effects counts the effects the system recorded under key (every
	// effect when key is ""), read from the system itself, not through
	// System's Lookup.
	Effects func(ctx context.Context, key string) (int, error)
}

// LiveOptions tunes a live run.
type LiveOptions struct {
	// FaultRoute ("POST /refunds") is the request the fault proxy fails:
	// that method, a path ending so. Empty: the next request that is not a
	// read (a GET, a HEAD or a GraphQL query).
	FaultRoute string
	// Keys starts every idempotency key of the run; empty makes one
	// ("conformance-" and 8 random hex digits), so the system has seen
	// none of them before.
	Keys string
}

// Result is what one check of a live run found.
type Result struct {
	Check string
	// Problems is why it failed; none when it passed.
	Problems []string
	Took     time.Duration
}

// Passed says whether the check found no problem.
func (r Result) Passed() bool { return len(r.Problems) == 0 }

// RunLive connects the adapter to a live system once, with the suite's
// fault proxy in front of the system (a 5xx answer without sending the
// request on, a connection reset after the request was read, an answer
// dropped after the system committed), and runs every check against it,
// one after another so that each reads the state the last one left. Every
// check has keys of its own; each check's writes are really made. report,
// when not nil, gets each result as it is known. The error is a failure to
// connect, which runs no check.
func RunLive(ctx context.Context, connect func(transport http.RoundTripper) (LiveBackend, error), fix Fixture,
	opts LiveOptions, report func(Result)) ([]Result, error) {
	keys := opts.Keys
	if keys == "" {
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		keys = "conformance-" + hex.EncodeToString(b)
	}
	proxy := &faultProxy{route: opts.FaultRoute}
	run := &recorder{ctx: ctx}
	defer run.cleanup()
	var e *Env
	var connectErr error
	run.do(func() {
		e = start(run, func(t T, tr http.RoundTripper) Backend {
			lb, err := connect(tr)
			if err != nil {
				connectErr = err
				runtime.Goexit()
			}
			return Backend{System: lb.System,
				Effects: func(t T, key string) int {
					t.Helper()
					n, err := lb.Effects(t.Context(), key)
					if err != nil {
						t.Fatalf("counting the system's effects under the key %q: %v", key, err)
					}
					return n
				},
				Fault: func(t T, f Fault) {
					proxy.arm(f)
					t.Cleanup(func() {
						if proxy.disarm() {
							t.Errorf("the fault proxy saw no write to fail as %s (fault_route %q)", f, opts.FaultRoute)
						}
					})
				}}
		}, fix, func(next http.RoundTripper) http.RoundTripper { proxy.next = next; return proxy })
	})
	if connectErr != nil {
		return nil, connectErr
	}
	if len(run.problems) > 0 {
		return nil, fmt.Errorf("conformance: %s", strings.Join(run.problems, "; "))
	}
	var out []Result
	for i, c := range Checks() {
		if ctx.Err() != nil {
			break
		}
		rec := &recorder{ctx: ctx}
		began := time.Now()
		rec.do(func() { e.Run(rec, c, fmt.Sprintf("%s-%02d", keys, i+1)) })
		rec.cleanup()
		r := Result{Check: c.Name, Problems: rec.problems, Took: time.Since(began)}
		out = append(out, r)
		if report != nil {
			report(r)
		}
	}
	return out, ctx.Err()
}

// recorder is the T a live check runs with: it keeps what the check
// reports; Fatal ends the check's goroutine as in a test.
type recorder struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string
	cleanups []func()
}

func (r *recorder) Helper()                  {}
func (r *recorder) Context() context.Context { return r.ctx }
func (r *recorder) Error(args ...any)        { r.add(strings.TrimSuffix(fmt.Sprintln(args...), "\n")) }
func (r *recorder) Errorf(format string, args ...any) {
	r.add(fmt.Sprintf(format, args...))
}
func (r *recorder) Fatal(args ...any) { r.Error(args...); runtime.Goexit() }
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, s)
}

// do runs f on a goroutine of its own (Fatal ends it) and waits for it; a
// panic is a problem.
func (r *recorder) do(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				r.add(fmt.Sprintf("panic: %v", p))
			}
		}()
		f()
	}()
	<-done
}

// cleanup runs the cleanups, last registered first.
func (r *recorder) cleanup() {
	r.mu.Lock()
	fs := r.cleanups
	r.cleanups = nil
	r.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// faultProxy plays an armed fault on the next write it carries, the way a
// network and a failing system do: a 5xx answer without passing the
// request on, a reset by a peer that read the whole request, or the
// system's answer dropped after it committed.
type faultProxy struct {
	next  http.RoundTripper
	route string
	mu    sync.Mutex
	armed Fault
}

func (p *faultProxy) arm(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = f
}

// disarm disarms the proxy and says whether a fault was still armed.
func (p *faultProxy) disarm() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	armed := p.armed != ""
	p.armed = ""
	return armed
}

// take returns the armed fault when r is the request it is for, and
// disarms it.
func (p *faultProxy) take(r *http.Request) Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed == "" {
		return ""
	}
	if method, path, ok := strings.Cut(p.route, " "); ok {
		if r.Method != method || !strings.HasSuffix(strings.TrimSuffix(r.URL.Path, "/"), strings.TrimSuffix(path, "/")) {
			return ""
		}
	} else if isRead(r) {
		return ""
	}
	f := p.armed
	p.armed = ""
	return f
}

func (p *faultProxy) RoundTrip(r *http.Request) (*http.Response, error) {
	switch p.take(r) {
	case FaultServerError:
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		body := `{"error":{"code":"conformance_fault","message":"The conformance suite's fault proxy answered 503 and did not pass the request on."}}`
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable", Proto: "HTTP/1.1",
			ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
	case FaultReset:
		return resetAfterReading(r)
	case FaultDropAfterCommit:
		resp, err := p.next.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("conformance fault proxy: the system's answer (%d) was dropped: %w", resp.StatusCode, syscall.ECONNRESET)
	}
	return p.next.RoundTrip(r)
}

// resetAfterReading sends r over a real connection to a loopback peer
// that reads the whole request and resets the connection: the request
// left, nothing reached the system.
func resetAfterReading(r *http.Request) (*http.Response, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if req, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
			_, _ = io.Copy(io.Discard, req.Body)
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		c.Close()
	}()
	var d net.Dialer
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", ln.Addr().String())
	}
	tr := &http.Transport{DialContext: dial, DialTLSContext: dial, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	return tr.RoundTrip(r)
}
