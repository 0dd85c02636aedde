package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Load is one closed-loop HTTP load: Connections clients, each with one
// keep-alive connection, send the next request as soon as the answer to the
// last one has been read, for Warmup and then Duration. The answers read
// completely within the Duration window are counted (as wrk does), with
// their whole latency; requests still open when the window closes are
// abandoned and not counted. Only loopback addresses are allowed.
type Load struct {
	URL         string
	Method      string // GET when empty
	Header      http.Header
	Connections int
	Duration    time.Duration
	Warmup      time.Duration
	// Expect is the status an answer must have to count as a success
	// (200 when 0); any other status or a transport error is an error.
	Expect int
}

// LoadResult is what one Load measured.
type LoadResult struct {
	Connections int           `json:"connections"`
	Duration    time.Duration `json:"-"`
	Requests    uint64        `json:"requests"` // answered with the expected status, in the window
	Errors      uint64        `json:"errors"`   // other statuses and transport errors, in the window
	Bytes       uint64        `json:"bytes"`    // body bytes of the counted answers, as sent (compressed or not)
	Latency     Histogram     `json:"-"`        // of the counted answers
	// Encoding is the Content-Encoding of the last answer ("" for none).
	Encoding string `json:"content_encoding"`
	// FirstError describes the first error seen, for the report.
	FirstError string `json:"first_error,omitempty"`
}

// RPS is counted answers per second of the window.
func (r LoadResult) RPS() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Duration.Seconds()
}

// Run drives the load and returns its result. It fails when the URL is not
// on loopback or nothing at all was answered as expected.
func (l Load) Run(ctx context.Context) (LoadResult, error) {
	u, err := url.Parse(l.URL)
	if err != nil {
		return LoadResult{}, err
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return LoadResult{}, fmt.Errorf("bench: %s is not a loopback address", u.Host)
	}
	if l.Connections < 1 || l.Duration <= 0 {
		return LoadResult{}, errors.New("bench: a load needs at least one connection and a duration")
	}
	method, expect := l.Method, l.Expect
	if method == "" {
		method = http.MethodGet
	}
	if expect == 0 {
		expect = http.StatusOK
	}
	start := time.Now()
	from, until := start.Add(l.Warmup), start.Add(l.Warmup+l.Duration)
	runCtx, cancel := context.WithDeadline(ctx, until)
	defer cancel()

	type part struct {
		hist                 Histogram
		ok, errs, bytes      uint64
		encoding, firstError string
	}
	parts := make([]part, l.Connections)
	raw, err := l.request(u, method)
	if err != nil {
		return LoadResult{}, err
	}
	var wg sync.WaitGroup
	for i := range parts {
		p := &parts[i]
		wg.Go(func() {
			var c *conn
			var err error
			defer func() { c.close() }()
			for runCtx.Err() == nil && time.Now().Before(until) {
				t0 := time.Now()
				var status int
				var n int64
				var enc string
				var reuse bool
				err = nil
				if c == nil {
					c, err = dial(runCtx, u.Host)
				}
				if err == nil {
					status, enc, n, reuse, err = c.roundTrip(runCtx, raw)
				}
				t1 := time.Now()
				if !reuse {
					c.close()
					c = nil
				}
				if t1.Before(from) || t1.After(until) {
					continue // answered in the warm-up, or cut off by the end of the window
				}
				switch {
				case err != nil:
					p.errs++
					if p.firstError == "" {
						p.firstError = err.Error()
					}
				case status != expect:
					p.errs++
					if p.firstError == "" {
						p.firstError = fmt.Sprintf("status %d", status)
					}
				default:
					p.ok++
					p.bytes += uint64(n)
					p.hist.Record(t1.Sub(t0))
					p.encoding = enc
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return LoadResult{}, err
	}
	r := LoadResult{Connections: l.Connections, Duration: l.Duration}
	for i := range parts {
		p := &parts[i]
		r.Latency.Merge(&p.hist)
		r.Requests += p.ok
		r.Errors += p.errs
		r.Bytes += p.bytes
		if p.encoding != "" {
			r.Encoding = p.encoding
		}
		if r.FirstError == "" {
			r.FirstError = p.firstError
		}
	}
	if r.Requests == 0 {
		return r, fmt.Errorf("bench: no answer with status %d from %s (%d errors; first: %s)", expect, l.URL, r.Errors, r.FirstError)
	}
	return r, nil
}

// request is the request every connection sends, as bytes: HTTP/1.1 with
// keep-alive and the load's headers.
func (l Load) request(u *url.URL, method string) ([]byte, error) {
	req, err := http.NewRequest(method, u.String(), nil)
	if err != nil {
		return nil, err
	}
	for k, v := range l.Header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "countersign-bench")
	var b bytes.Buffer
	if err := req.Write(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// conn is one keep-alive connection. The load writes the prepared request
// and parses the answer with net/http's own reader, without a client's
// pooling and bookkeeping, so that the generator costs the machine little
// beside what it measures.
type conn struct {
	c  net.Conn
	br *bufio.Reader
}

func dial(ctx context.Context, host string) (*conn, error) {
	c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, br: bufio.NewReaderSize(c, 64<<10)}, nil
}

func (c *conn) close() {
	if c != nil {
		c.c.Close()
	}
}

// roundTrip sends raw and reads the whole answer: status, Content-Encoding,
// body bytes as sent, and whether the connection may carry the next
// request. The connection is closed when ctx ends.
func (c *conn) roundTrip(ctx context.Context, raw []byte) (status int, encoding string, n int64, reuse bool, err error) {
	stop := context.AfterFunc(ctx, func() { c.c.Close() })
	defer stop()
	_ = c.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.c.Write(raw); err != nil {
		return 0, "", 0, false, err
	}
	res, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return 0, "", 0, false, err
	}
	n, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Content-Encoding"), n, err == nil && !res.Close, err
}
