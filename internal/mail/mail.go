// Package mail sends messages: through an SMTP server, or, where there is
// none (the demo), into a folder of .eml files a person can open. A message
// is plain text, or plain text and HTML as multipart/alternative (the
// plain part first, whole on its own); none carries tracking or remote
// content.
package mail

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"net/smtp"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Message is one mail to one recipient.
type Message struct {
	To      string
	Subject string
	// Body is the plain text, always sent.
	Body string
	// HTML, when set, is the same message as an HTML document, sent beside
	// Body as multipart/alternative. The caller escapes what it puts in.
	HTML string
	// FromName, when set, is the sender's display name, put before the
	// configured From address in place of its own ("Harbour & Pine via
	// Countersign" <no-reply@…>): a customer recognises the business they
	// deal with, not the console.
	FromName string
}

// Sender delivers messages. Send fails when the message could not be
// handed on; it never retries on its own.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// ErrHeader is returned for a recipient or subject that would break the
// mail's headers (a line break, or an empty recipient).
var ErrHeader = errors.New("mail: recipient or subject not usable in a header")

func (m Message) check() error {
	if strings.TrimSpace(m.To) == "" || strings.ContainsAny(m.To, "\r\n,;<>") || strings.ContainsAny(m.Subject+m.FromName, "\r\n") {
		return ErrHeader
	}
	return nil
}

// format renders the message as RFC 5322 text with CRLF line ends; a
// subject or sender's name beyond ASCII is encoded as RFC 2047 says, and
// each text part as quoted-printable (RFC 2045): lines of at most 76
// characters, anything beyond ASCII escaped, so a shop's name or an
// address in any script and a long line arrive as written through any
// mail server.
func (m Message) format(from string, at time.Time) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMIME-Version: 1.0\r\n",
		m.sender(from), m.To, headerText(m.Subject), at.Format(time.RFC1123Z))
	if m.HTML == "" {
		b.WriteString("Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n")
		b.WriteString(quotedPrintable(m.Body))
		return []byte(b.String())
	}
	boundary := "countersign-" + randomHex(12)
	fmt.Fprintf(&b, "Content-Type: multipart/alternative;\r\n boundary=%q\r\n\r\n", boundary)
	for _, part := range []struct{ kind, text string }{{"text/plain", m.Body}, {"text/html", m.HTML}} {
		fmt.Fprintf(&b, "--%s\r\nContent-Type: %s; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n", boundary, part.kind)
		b.WriteString(quotedPrintable(part.text))
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return []byte(b.String())
}

// quotedPrintable encodes text, its line ends made CRLF, as
// quoted-printable: the boundary's random part has a dash, which the
// encoding never writes at a line's start, so no line can be taken for it.
func quotedPrintable(text string) string {
	var b strings.Builder
	w := quotedprintable.NewWriter(&b)
	// A strings.Builder does not fail.
	_, _ = w.Write([]byte(crlf(text)))
	_ = w.Close()
	return b.String()
}

// crlf gives text CRLF line ends, as RFC 5322 wants.
func crlf(text string) string {
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\r\n")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sender is the From header: the configured address, under FromName when
// the message has one.
func (m Message) sender(from string) string {
	if m.FromName == "" {
		return from
	}
	addr, err := netmail.ParseAddress(from)
	if err != nil {
		return from
	}
	if ascii(m.FromName) {
		return (&netmail.Address{Name: m.FromName, Address: addr.Address}).String()
	}
	name, angle := headerText(m.FromName), "<"+addr.Address+">"
	last := "From: " + name
	if i := strings.LastIndex(name, "\r\n"); i >= 0 {
		last = name[i+2:]
	}
	if len(last)+1+len(angle) <= 76 {
		return name + " " + angle
	}
	return name + "\r\n " + angle
}

// SMTP sends through a mail server with Go's net/smtp: STARTTLS when the
// server offers it, PLAIN auth when User is set (net/smtp sends it only
// over TLS or to localhost).
type SMTP struct {
	Addr     string // host:port
	User     string
	Password string
	From     string
}

// Send hands m to the server within ctx: its deadline bounds the dial and
// every read and write of the conversation, and its end breaks off a
// conversation under way, so a server that stalls holds no caller past
// its time (the error then wraps ctx's).
func (s SMTP) Send(ctx context.Context, m Message) error {
	if err := m.check(); err != nil {
		return err
	}
	if err := s.send(ctx, m.To, m.format(s.From, time.Now())); err != nil {
		// The connection's deadline may fire a moment before ctx's own
		// timer: past the deadline, the deadline is why.
		if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
			err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
		} else if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return fmt.Errorf("mail: send to the server at %s: %w", s.Addr, err)
	}
	return nil
}

// send is smtp.SendMail on a connection that ctx bounds.
func (s SMTP) send(ctx context.Context, to string, msg []byte) error {
	host, _, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(deadline); err != nil {
			return err
		}
	}
	// A context cancelled without a deadline ends the conversation too:
	// a deadline in the past fails the read or write under way.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return err
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}); err != nil {
			return err
		}
	}
	if s.User != "" {
		if err := c.Auth(smtp.PlainAuth("", s.User, s.Password, host)); err != nil {
			return err
		}
	}
	from := s.From
	if addr, err := netmail.ParseAddress(s.From); err == nil {
		from = addr.Address
	}
	if err := c.Mail(from); err != nil {
		return err
	}
	if err := c.Rcpt(to); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// Dir writes each message to its own file in Path ("<time>-<random>.eml",
// readable by the owner only): the demo's mail sink, so a person can read
// the codes the console would have mailed.
type Dir struct {
	Path string
	From string
}

// Send writes m as a new file.
func (d Dir) Send(_ context.Context, m Message) error {
	if err := m.check(); err != nil {
		return err
	}
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		return fmt.Errorf("mail: folder %s: %w", d.Path, err)
	}
	now := time.Now().UTC()
	name := filepath.Join(d.Path, now.Format("20060102T150405.000000000")+"-"+randomHex(4)+".eml")
	if err := os.WriteFile(name, m.format(d.From, now), 0o600); err != nil {
		return fmt.Errorf("mail: write %s: %w", name, err)
	}
	return nil
}

// Memory keeps messages in memory: for tests, and for programs that embed
// the console and deliver mail themselves.
type Memory struct {
	mu   sync.Mutex
	msgs []Message
	fail error
}

// Send keeps m, or fails as Fail said.
func (mm *Memory) Send(_ context.Context, m Message) error {
	if err := m.check(); err != nil {
		return err
	}
	mm.mu.Lock()
	defer mm.mu.Unlock()
	if mm.fail != nil {
		return mm.fail
	}
	mm.msgs = append(mm.msgs, m)
	return nil
}

// Fail makes every later Send fail with err, as a mail server that is
// down would, and keep nothing; nil makes them work again.
func (mm *Memory) Fail(err error) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	mm.fail = err
}

// Sent returns a copy of every message kept so far, oldest first.
func (mm *Memory) Sent() []Message {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	return append([]Message(nil), mm.msgs...)
}
