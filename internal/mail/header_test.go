package mail_test

import (
	"bytes"
	"context"
	"mime"
	netmail "net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"countersign/internal/mail"
)

// TestHeadersInAnyScriptDecodeAndStayShort: a subject and a sender's
// name in Arabic, or with é and ß, are RFC 2047 encoded-words whose
// lines stay within 76 ASCII characters, and a mail reader decodes them
// back as written.
func TestHeadersInAnyScriptDecodeAndStayShort(t *testing.T) {
	for _, m := range []mail.Message{
		{To: "a@example.test", Subject: "طلب من متجر الياسمين للأدوات المنزلية بانتظار قرارك بشأن الاسترداد", Body: "x",
			FromName: "متجر الياسمين للأدوات المنزلية عبر Countersign"},
		{To: "a@example.test", Subject: "Ihr Code zur Bestätigung einer Anfrage bei Großmann & Söhne Feinkost, Straße des 17. Juni", Body: "x",
			FromName: "Café Lumière über Countersign"},
		{To: "a@example.test", Subject: "Une demande de Café Lumière attend votre décision", Body: "x", FromName: "Harbour & Pine"},
	} {
		dir := t.TempDir()
		if err := (mail.Dir{Path: dir, From: "Countersign <no-reply@console.test>"}).Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
		raw, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		head, _, _ := strings.Cut(string(raw), "\r\n\r\n")
		for _, line := range strings.Split(head, "\r\n") {
			if len(line) > 76 || !isASCII(line) {
				t.Errorf("header line of %d characters or beyond ASCII: %q", len(line), line)
			}
		}
		msg, err := netmail.ReadMessage(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		var dec mime.WordDecoder
		if got, err := dec.DecodeHeader(msg.Header.Get("Subject")); err != nil || got != m.Subject {
			t.Errorf("subject %q (%v); want %q", got, err, m.Subject)
		}
		from, err := msg.Header.AddressList("From")
		if err != nil || len(from) != 1 || from[0].Name != m.FromName || from[0].Address != "no-reply@console.test" {
			t.Errorf("from %v (%v); want %q <no-reply@console.test>", from, err, m.FromName)
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] > '~' {
			return false
		}
	}
	return true
}
