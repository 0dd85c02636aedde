package mail_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/mail"
)

// smtpServer is a mail server on loopback that speaks just enough SMTP
// for net/smtp: it keeps each message's DATA, and stalls — reads on and
// answers nothing — at the stage named ("greeting", "data"; "" never).
type smtpServer struct {
	ln    net.Listener
	stall string
	// received has a value for each message taken.
	received chan struct{}
	mu       sync.Mutex
	data     [][]byte
	conns    []net.Conn
}

func newSMTPServer(t *testing.T, stall string) *smtpServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpServer{ln: ln, stall: stall, received: make(chan struct{}, 16)}
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.conns {
			c.Close()
		}
	})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, conn)
			s.mu.Unlock()
			go s.serve(conn)
		}
	}()
	return s
}

func (s *smtpServer) serve(conn net.Conn) {
	r := bufio.NewReader(conn)
	say := func(line string) { _, _ = io.WriteString(conn, line+"\r\n") }
	if s.stall == "greeting" {
		_, _ = io.Copy(io.Discard, r)
		return
	}
	say("220 mail.test ESMTP")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		switch verb := strings.ToUpper(strings.Fields(line + " x")[0]); verb {
		case "EHLO":
			say("250-mail.test")
			say("250 8BITMIME")
		case "HELO", "MAIL", "RCPT", "RSET", "NOOP":
			say("250 ok")
		case "DATA":
			say("354 go on")
			var msg bytes.Buffer
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				msg.WriteString(strings.TrimPrefix(l, "."))
			}
			s.mu.Lock()
			s.data = append(s.data, msg.Bytes())
			s.mu.Unlock()
			s.received <- struct{}{}
			if s.stall == "data" {
				_, _ = io.Copy(io.Discard, r)
				return
			}
			say("250 queued")
		case "QUIT":
			say("221 bye")
			return
		default:
			say("502 not here")
		}
	}
}

func (s *smtpServer) sent() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.data...)
}

// sendWithin sends m through the server within ctx and returns Send's
// answer; a Send that has not returned in ten seconds fails the test
// (the bound on a broken Send, not a wait for a working one).
func sendWithin(t *testing.T, ctx context.Context, addr string, m mail.Message) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- (mail.SMTP{Addr: addr, From: "Countersign <no-reply@console.test>"}).Send(ctx, m) }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Send did not return although its context ended")
		return nil
	}
}

// TestSMTPHonoursTheContextsDeadline: a mail server that stalls — before
// its greeting, or after taking the message without acknowledging it —
// holds Send no longer than its context: the deadline ends it, as does a
// cancellation, and the error says so.
func TestSMTPHonoursTheContextsDeadline(t *testing.T) {
	t.Parallel()
	msg := mail.Message{To: "jordan@example.test", Subject: "Review", Body: "Hello"}
	for _, stall := range []string{"greeting", "data"} {
		srv := newSMTPServer(t, stall)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		err := sendWithin(t, ctx, srv.ln.Addr().String(), msg)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a server stalling at its %s: %v after %v, want the context's deadline", stall, err, time.Since(start))
		}
	}
	srv := newSMTPServer(t, "data")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancelled once the server holds the message unacknowledged.
		<-srv.received
		cancel()
	}()
	if err := sendWithin(t, ctx, srv.ln.Addr().String(), msg); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled send: %v, want the context's cancellation", err)
	}
}

// TestSMTPSendsQuotedPrintableParts: a message through a mail server
// carries its plain and HTML parts quoted-printable, every line at most
// 76 characters and ASCII, and a reader decoding them (net/mail,
// mime/multipart, mime/quotedprintable) gets back each part as written:
// a shop's name beyond ASCII, an address in another script, a line
// longer than any mail server keeps.
func TestSMTPSendsQuotedPrintableParts(t *testing.T) {
	t.Parallel()
	srv := newSMTPServer(t, "")
	long := "Ship to: " + strings.Repeat("Straße der Pariser Kommune 12, 10243 Berlin · ", 6)
	plain := "Hello Jördis,\nCafé Lumière asks you to review this request:\n" + long + "\n= not a soft break =\nБлагодарим вас\n"
	html := `<p style="margin:0">Café Lumière · <a href="https://console.test/m/` + strings.Repeat("A", 43) + `">Review and decide</a></p>` +
		"<p>" + long + "</p>\n"
	m := mail.Message{To: "jordis@example.test", Subject: "Review and decide a request with Café Lumière", Body: plain, HTML: html,
		FromName: "Café Lumière via Countersign"}
	if err := sendWithin(t, context.Background(), srv.ln.Addr().String(), m); err != nil {
		t.Fatal(err)
	}
	sent := srv.sent()
	if len(sent) != 1 {
		t.Fatalf("%d messages reached the server", len(sent))
	}
	_, body, _ := strings.Cut(string(sent[0]), "\r\n\r\n")
	for i, line := range strings.Split(body, "\r\n") {
		if len(line) > 76 {
			t.Errorf("line %d is %d characters long: %q", i, len(line), line)
		}
		for _, r := range line {
			if r > 126 {
				t.Errorf("line %d carries %q beyond ASCII: %q", i, r, line)
				break
			}
		}
	}
	msg, err := netmail.ReadMessage(bytes.NewReader(sent[0]))
	if err != nil {
		t.Fatal(err)
	}
	var dec mime.WordDecoder
	if subject, err := dec.DecodeHeader(msg.Header.Get("Subject")); err != nil || subject != m.Subject {
		t.Errorf("subject %q (%v), want %q", subject, err, m.Subject)
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	want := []string{strings.ReplaceAll(plain, "\n", "\r\n"), strings.ReplaceAll(html, "\n", "\r\n")}
	for i := 0; ; i++ {
		p, err := r.NextRawPart()
		if errors.Is(err, io.EOF) {
			if i != 2 {
				t.Errorf("%d parts, want 2", i)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if enc := p.Header.Get("Content-Transfer-Encoding"); enc != "quoted-printable" {
			t.Errorf("part %d is %q, want quoted-printable", i, enc)
		}
		body, err := io.ReadAll(quotedprintable.NewReader(p))
		if err != nil {
			t.Fatalf("part %d does not decode: %v", i, err)
		}
		if i < len(want) && string(body) != want[i] {
			t.Errorf("part %d decodes to\n%q\nwant\n%q", i, body, want[i])
		}
	}
}
