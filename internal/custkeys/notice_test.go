package custkeys_test

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/text/language"

	"countersign/internal/adapter"
	"countersign/internal/custkeys"
	"countersign/internal/locale"
	"countersign/internal/locale/pseudotest"
)

var noticeAt = time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)

func parisBrand(t *testing.T) adapter.Brand {
	t.Helper()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	return adapter.Brand{Name: "Harbour & Pine", Zone: paris}
}

// TestPasskeyNoticesInThePseudoLocaleComeFromTheCatalogue: both notices,
// rendered in the pseudo-locale, hold no text but catalogue texts and
// the business's data (its name, the passkey's name), in the subject,
// the sender's name, the plain part and the HTML part.
func TestPasskeyNoticesInThePseudoLocaleComeFromTheCatalogue(t *testing.T) {
	cat, err := locale.Load(locale.WithPseudo())
	if err != nil {
		t.Fatal(err)
	}
	data := []string{"Harbour & Pine", "Safari on iPhone", "CEST"}
	for _, added := range []bool{true, false} {
		m := custkeys.NoticeMail(cat.For(locale.Pseudo), adapter.Contact{Email: "j@example.test"}, parisBrand(t), added, "Safari on iPhone", noticeAt)
		for _, s := range append([]string{m.Subject, m.FromName}, strings.Split(m.Body, "\n")...) {
			if rest := pseudotest.Stray(s, data...); rest != "" {
				t.Errorf("added %v: %q is from no catalogue", added, s)
			}
		}
		if got := pseudotest.SentenceStrays(m.HTML, data...); len(got) > 0 {
			t.Errorf("added %v: the HTML has text from no catalogue: %q", added, got)
		}
	}
}

// TestAPasskeyNoticeInFrenchAndArabic: the notices read in the
// customer's language, the moment in the business's zone, the HTML in
// the language's direction with the business's words isolated.
func TestAPasskeyNoticeInFrenchAndArabic(t *testing.T) {
	// The passkey is named after the browser that added it, in the
	// notice's language.
	iPhone := custkeys.BrowserName("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1")
	fr := custkeys.NoticeMail(locale.Shipped().For(language.French), adapter.Contact{Email: "j@example.test"}, parisBrand(t), true,
		iPhone, noticeAt)
	if fr.Subject != "Une clé d’accès a été ajoutée pour Harbour & Pine" || fr.FromName != "Harbour & Pine via Countersign" {
		t.Errorf("subject %q from %q", fr.Subject, fr.FromName)
	}
	if want := "Une clé d’accès (Safari sur iPhone) a été ajoutée le 1er avr., 11:00 CEST\u00a0: vous pouvez désormais confirmer"; !strings.HasPrefix(fr.Body, want) {
		t.Errorf("body %q; want it to start %q", fr.Body, want)
	}
	ar := custkeys.NoticeMail(locale.Shipped().For(language.Arabic), adapter.Contact{Email: "j@example.test"}, parisBrand(t), false,
		iPhone, noticeAt)
	if ar.Subject != "أُزيل مفتاح مرور لحسابك لدى Harbour & Pine" {
		t.Errorf("subject %q", ar.Subject)
	}
	for _, want := range []string{`<html lang="ar" dir="rtl">`, "أُزيل مفتاح المرور <bdi>Safari على iPhone</bdi> في <bdi>1 أبريل، 11:00 CEST</bdi>"} {
		if !strings.Contains(ar.HTML, want) {
			t.Errorf("the HTML lacks %q:\n%s", want, ar.HTML)
		}
	}
}
