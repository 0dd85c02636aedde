package adapter_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"countersign/internal/adapter"
)

func TestTransportFailure(t *testing.T) {
	cases := []struct {
		written, write bool
		code           string
		outcome        adapter.Outcome
	}{
		{false, true, adapter.CodeUnreachable, adapter.NotSent},
		{true, true, adapter.CodeOutcomeUnknown, adapter.Unknown},
		{true, false, adapter.CodeUnreachable, adapter.NotSent},
		{false, false, adapter.CodeUnreachable, adapter.NotSent},
	}
	for _, tc := range cases {
		ae := adapter.TransportFailure("The shop", &adapter.TransportError{Method: "POST", Path: "/refunds", Written: tc.written, Err: errors.New("EOF")}, tc.write)
		if ae.Code != tc.code || ae.Outcome != tc.outcome {
			t.Errorf("written=%t write=%t: %s/%s, want %s/%s", tc.written, tc.write, ae.Code, ae.Outcome, tc.code, tc.outcome)
		}
	}
}

// TestExchange sends real requests: an answer of any status comes back
// with its body and the headers Prepare set; a write to a server that
// hangs up after reading it is Unknown; a refused connection is NotSent.
func TestExchange(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hangup" {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(r.Header.Get("X-Request-Id") + " " + r.Header.Get("Content-Type")))
	}))
	defer srv.Close()
	status, body, err := adapter.Exchange(ctx, srv.Client(), "The shop", adapter.Request{Method: "POST", URL: srv.URL + "/x", Path: "/x",
		Body: []byte(`{}`), Write: true, Prepare: func(r *http.Request) { r.Header.Set("X-Request-Id", "k1") }})
	if err != nil || status != http.StatusConflict || string(body) != "k1 application/json" {
		t.Errorf("Exchange = %d %q %v; want 409 with the key and the content type", status, body, err)
	}
	_, _, err = adapter.Exchange(ctx, srv.Client(), "The shop", adapter.Request{Method: "POST", URL: srv.URL + "/hangup", Path: "/hangup", Body: []byte(`{}`), Write: true})
	if ae, _ := adapter.AsError(err); ae == nil || ae.Outcome != adapter.Unknown {
		t.Errorf("hung-up write: %v, want Unknown", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	_, _, err = adapter.Exchange(ctx, srv.Client(), "The shop", adapter.Request{Method: "POST", URL: closed + "/x", Path: "/x", Write: true})
	if ae, _ := adapter.AsError(err); ae == nil || ae.Code != adapter.CodeUnreachable || ae.Message != "The shop could not be reached; nothing was changed." {
		t.Errorf("refused connection: %v, want system_unreachable naming the shop", err)
	}
}

func TestFailedAnswer(t *testing.T) {
	cause := errors.New("the system answered 503")
	cases := []struct {
		status  int
		write   bool
		code    string
		outcome adapter.Outcome
	}{
		{503, true, adapter.CodeOutcomeUnknown, adapter.Unknown},
		{503, false, "system_error", adapter.NotSent},
		{422, true, "system_rejected", adapter.Refused},
		{404, false, "system_rejected", adapter.Refused},
	}
	for _, tc := range cases {
		ae := adapter.FailedAnswer("Billing", tc.status, cause, tc.write)
		if ae.Code != tc.code || ae.Outcome != tc.outcome || !errors.Is(ae, cause) {
			t.Errorf("%d write=%t: %s/%s (cause kept: %t), want %s/%s", tc.status, tc.write, ae.Code, ae.Outcome, errors.Is(ae, cause), tc.code, tc.outcome)
		}
	}
}

// TestAWriteIsNeverResentByTheTransport: Go's transport resends a request
// carrying an Idempotency-Key header when the reused connection it wrote
// it on breaks; a write reaches the system once, whatever its headers and
// whether it has a body, and the lost answer is Unknown.
func TestAWriteIsNeverResentByTheTransport(t *testing.T) {
	for _, body := range [][]byte{[]byte(`{"seats": 7}`), nil} {
		var writes atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				return
			}
			if r.Header.Get("Idempotency-Key") != "k1" {
				t.Errorf("the write came without its key: %v", r.Header)
			}
			writes.Add(1)
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.Close()
		}))
		c := srv.Client()
		ctx := context.Background()
		// A read first, so the write goes on a reused connection.
		if _, _, err := adapter.Exchange(ctx, c, "The plans", adapter.Request{Method: "GET", URL: srv.URL + "/p", Path: "/p"}); err != nil {
			t.Fatal(err)
		}
		_, _, err := adapter.Exchange(ctx, c, "The plans", adapter.Request{Method: "PATCH", URL: srv.URL + "/p", Path: "/p", Body: body, Write: true,
			Prepare: func(r *http.Request) { r.Header.Set("Idempotency-Key", "k1") }})
		if ae, ok := adapter.AsError(err); !ok || ae.Outcome != adapter.Unknown {
			t.Errorf("body %q: %v, want Unknown", body, err)
		}
		if n := writes.Load(); n != 1 {
			t.Errorf("body %q: the system received the write %d times, want once", body, n)
		}
		srv.Close()
	}
}

// TestExchangeNeverFollowsARedirect: through NoRedirects, even of a
// client that would follow them, a 308 to a write is received once and
// is Unknown; a 302 to a read is NotSent, and the target never asked.
func TestExchangeNeverFollowsARedirect(t *testing.T) {
	var writes, elsewhere atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/write":
			writes.Add(1)
			http.Redirect(w, r, "/write", http.StatusPermanentRedirect)
		case "/read":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		default:
			elsewhere.Add(1)
		}
	}))
	defer srv.Close()
	c := adapter.NoRedirects(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }})
	_, _, err := adapter.Exchange(context.Background(), c, "The shop", adapter.Request{Method: "POST", URL: srv.URL + "/write", Path: "/write", Body: []byte(`{}`), Write: true})
	if ae, _ := adapter.AsError(err); ae == nil || ae.Outcome != adapter.Unknown || writes.Load() != 1 {
		t.Errorf("a write answered 308: %v, received %d times; want unknown, once", err, writes.Load())
	}
	_, _, err = adapter.Exchange(context.Background(), c, "The shop", adapter.Request{Method: "GET", URL: srv.URL + "/read", Path: "/read"})
	if ae, _ := adapter.AsError(err); ae == nil || ae.Outcome != adapter.NotSent || elsewhere.Load() != 0 {
		t.Errorf("a read answered 302: %v, target asked %d times; want not sent, never", err, elsewhere.Load())
	}
}
