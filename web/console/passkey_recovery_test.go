package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/web/kit"
	"countersign/web/webtest"
)

// TestFirstPasskeyComesWithRecoveryCodes: a person whose only factor is a
// passkey sees recovery codes once on the account page after adding it;
// the factor step then speaks of the passkey and a recovery code (not an
// app), and a recovery code signs them in when the passkey is lost.
func TestFirstPasskeyComesWithRecoveryCodes(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	pk, origin := passkeyConsole(t, b)
	agent := b.Users[accounts.Agent]
	c := pk.Client(t)
	c.MustSignIn(agent)
	if _, status, r := addPasskey(t, c, agent, "Phone", origin); status != http.StatusOK || r.Next != "/account/factors" {
		t.Fatalf("add a passkey: %d %+v", status, r)
	}
	var codes []string
	c.Get("/account/factors").Doc(t).Find(`[data-testid="recovery-code"]`).Each(func(_ int, s *goquery.Selection) {
		codes = append(codes, s.Text())
	})
	if len(codes) != 10 {
		t.Fatalf("%d recovery codes shown after the first passkey, want 10", len(codes))
	}
	page := c.Get("/account/factors").Doc(t)
	if page.Find(`[data-testid="recovery-code"]`).Length() != 0 || !strings.Contains(page.Find(`[data-testid="recovery-left"]`).Text(), "10 unused") {
		t.Fatalf("the second visit: codes shown again, or not counted: %q", page.Find(`[data-testid="account-factors"]`).Text())
	}
	if _, status, _ := addPasskey(t, c, agent, "Laptop", origin); status != http.StatusOK ||
		c.Get("/account/factors").Doc(t).Find(`[data-testid="recovery-code"]`).Length() != 0 {
		t.Fatalf("a second passkey: %d, or new recovery codes with it", status)
	}

	s := pk.Client(t)
	signInToFactor(t, s, agent)
	step := s.Get(kit.FactorPath).Doc(t)
	if h1 := step.Find("h1").Text(); h1 != "Use your passkey" {
		t.Errorf("the factor step of a passkey-only person says %q", h1)
	}
	if label := step.Find(`label[for="code"]`).Text(); !strings.HasPrefix(label, "Recovery code") {
		t.Errorf("the code field is labelled %q, want a recovery code", label)
	}
	if strings.Contains(step.Find("main").Text(), "authenticator app") {
		t.Errorf("the factor step speaks of an app the person does not have:\n%s", step.Find("main").Text())
	}
	if res := postCode(s, "abcde-fghjk"); res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(res.Doc(t).Find(`#code-error, .field-error`).Text()+res.Text, "recovery codes") {
		t.Fatalf("a wrong recovery code: %d", res.StatusCode)
	}
	if res := postCode(s, codes[0]); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a recovery code: %d\n%s", res.StatusCode, res.Text)
	}
	if by := identifiedBy(t, s); by != "password+recovery" {
		t.Fatalf("identified by %q, want password+recovery", by)
	}
}
