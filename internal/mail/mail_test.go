package mail_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	netmail "net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"countersign/internal/mail"
)

func TestDirWritesOneReadableFilePerMessage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mail")
	d := mail.Dir{Path: dir, From: "Shop <no-reply@shop.test>"}
	for i := 0; i < 2; i++ {
		if err := d.Send(context.Background(), mail.Message{To: "jordan@example.test", Subject: "Your code", Body: "Your code is 123456\nBye"}); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	if len(files) != 2 {
		t.Fatalf("%d files, want 2", len(files))
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"To: jordan@example.test\r\n", "Subject: Your code\r\n", "\r\n\r\nYour code is 123456\r\nBye"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the file lacks %q:\n%s", want, raw)
		}
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestHeaderInjectionIsRefused(t *testing.T) {
	var m mail.Memory
	for _, msg := range []mail.Message{
		{To: "a@example.test\r\nBcc: b@example.test", Subject: "x"},
		{To: "a@example.test", Subject: "x\nBcc: b@example.test"},
		{To: "a@example.test, b@example.test", Subject: "x"},
		{To: " ", Subject: "x"},
	} {
		if err := m.Send(context.Background(), msg); !errors.Is(err, mail.ErrHeader) {
			t.Errorf("%q / %q: %v, want ErrHeader", msg.To, msg.Subject, err)
		}
	}
	if len(m.Sent()) != 0 {
		t.Errorf("%d messages kept", len(m.Sent()))
	}
}

// TestSenderNamesTheBusiness: a message with FromName comes from the
// business "via Countersign" at the configured address, its name and
// subject encoded when they are not ASCII; without FromName the configured
// sender stays.
func TestSenderNamesTheBusiness(t *testing.T) {
	dir := t.TempDir()
	d := mail.Dir{Path: dir, From: "Countersign <no-reply@console.test>"}
	msgs := []mail.Message{
		{To: "jordan@example.test", Subject: "Your code to confirm a request with Harbour & Pine", Body: "x", FromName: "Harbour & Pine via Countersign"},
		{To: "jordan@example.test", Subject: "Votre code pour Café Lumière", Body: "x", FromName: "Café Lumière via Countersign"},
		{To: "jordan@example.test", Subject: "Plain", Body: "x"},
	}
	want := [][]string{
		{"From: \"Harbour & Pine via Countersign\" <no-reply@console.test>\r\n", "Subject: Your code to confirm a request with Harbour & Pine\r\n"},
		{"From: =?utf-8?q?Caf=C3=A9_Lumi=C3=A8re_via_Countersign?=\r\n <no-reply@console.test>\r\n", "Subject: =?utf-8?q?Votre_code_pour_Caf=C3=A9_Lumi=C3=A8re?=\r\n"},
		{"From: Countersign <no-reply@console.test>\r\n"},
	}
	for i, m := range msgs {
		sub := filepath.Join(dir, string(rune('a'+i)))
		d.Path = sub
		if err := d.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(sub, "*.eml"))
		raw, _ := os.ReadFile(files[0])
		for _, w := range want[i] {
			if !strings.Contains(string(raw), w) {
				t.Errorf("message %d lacks %q:\n%s", i, w, raw)
			}
		}
	}
	if err := (&mail.Memory{}).Send(context.Background(), mail.Message{To: "a@example.test", Subject: "x", FromName: "A\r\nBcc: b@example.test"}); !errors.Is(err, mail.ErrHeader) {
		t.Errorf("a sender's name with a line break: %v, want ErrHeader", err)
	}
}

// TestHTMLGoesBesideThePlainText: a message with HTML is
// multipart/alternative, the plain text first and whole, and a mail reader
// finds both parts.
func TestHTMLGoesBesideThePlainText(t *testing.T) {
	dir := t.TempDir()
	d := mail.Dir{Path: dir, From: "no-reply@shop.test"}
	if err := d.Send(context.Background(), mail.Message{To: "jordan@example.test", Subject: "Review", Body: "Refund: $42.10\nBye",
		HTML: "<p>Refund: <b>$42.10</b></p>"}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	kind, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || kind != "multipart/alternative" {
		t.Fatalf("content type %q (%v), want multipart/alternative", kind, err)
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	var got []string
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(p)
		got = append(got, p.Header.Get("Content-Type")+": "+string(body))
	}
	want := []string{"text/plain; charset=utf-8: Refund: $42.10\r\nBye", "text/html; charset=utf-8: <p>Refund: <b>$42.10</b></p>"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("parts %q, want %q", got, want)
	}
}
