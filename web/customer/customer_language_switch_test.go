package customer_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/locale"
	"countersign/web/webtest"
)

// switchForm is the language switch's form on page: its action, token and
// the page it comes back to.
func switchForm(t *testing.T, page webtest.Response) (action, csrf, next string) {
	t.Helper()
	form := page.Doc(t).Find(`[data-testid="language-switch"] form`)
	if form.Length() != 1 {
		t.Fatalf("no language switch on the page (status %d)\n%s", page.StatusCode, page.Text)
	}
	action, _ = form.Attr("action")
	csrf, _ = form.Find(`input[name="_csrf"]`).Attr("value")
	next, _ = form.Find(`input[name="next"]`).Attr("value")
	return action, csrf, next
}

// TestTheLanguageSwitchListsEveryLanguageInItsOwnWords: every customer
// page offers the shipped languages, each named in itself with its lang
// attribute, the page's own marked aria-current and not a button.
func TestTheLanguageSwitchListsEveryLanguageInItsOwnWords(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	_, link := b.PendingRefund(t)
	c := b.Client(t)
	c.Header.Set("Accept-Language", "fr")
	page := c.Get(link)
	doc := page.Doc(t)
	nav := doc.Find(`nav[data-testid="language-switch"]`)
	if label, _ := nav.Attr("aria-label"); label != "Langue" {
		t.Errorf("the switch is labelled %q, want the French catalogue's Langue", label)
	}
	want := map[string]string{"en": "English", "fr": "Français", "de": "Deutsch", "es": "Español", "ar": "العربية"}
	got := map[string]string{}
	nav.Find(`[lang]`).Each(func(_ int, s *goquery.Selection) {
		lang, _ := s.Attr("lang")
		got[lang] = strings.TrimSpace(s.Text())
	})
	if len(got) != len(want) {
		t.Errorf("the switch lists %v, want %v", got, want)
	}
	for tag, name := range want {
		if got[tag] != name {
			t.Errorf("%s is named %q, want %q", tag, got[tag], name)
		}
	}
	current := nav.Find(`[aria-current="true"]`)
	if lang, _ := current.Attr("lang"); current.Length() != 1 || lang != "fr" || current.Is("button") {
		t.Errorf("the current language: %d marked, %q; want French alone, not a button", current.Length(), lang)
	}
	if n := nav.Find(`button[name="locale"]`).Length(); n != len(want)-1 {
		t.Errorf("%d buttons, want one per other language", n)
	}
}

// TestTheLanguageSwitchKeepsTheChoiceAndThePlace: choosing a language
// sets the countersign_locale cookie (a year, the whole site, Lax,
// HttpOnly) and comes back to the page it was chosen on, in the state it
// was in: a link page whose code was sent still asks for it.
func TestTheLanguageSwitchKeepsTheChoiceAndThePlace(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithTypedCodes())
	_, link := b.PendingRefund(t)
	c := b.Client(t)
	c.SendCode(link, c.Get(link))
	page := c.Get(link)
	if page.Doc(t).Find(`[data-testid="code-form"]`).Length() != 1 {
		t.Fatalf("the link page does not ask for the code sent\n%s", page.Text)
	}
	action, csrf, next := switchForm(t, page)
	if action != "/locale" || next != link {
		t.Errorf("the switch posts to %q coming back to %q; want /locale and %q", action, next, link)
	}
	res := c.Post(action, url.Values{"_csrf": {csrf}, "next": {next}, "locale": {"ar"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != link {
		t.Fatalf("switch: %d to %q, want 303 to %s\n%s", res.StatusCode, res.Header.Get("Location"), link, res.Text)
	}
	var ck *http.Cookie
	for _, k := range res.Cookies() {
		if k.Name == locale.CookieName {
			ck = k
		}
	}
	if ck == nil || ck.Value != "ar" || ck.Path != "/" || ck.MaxAge != 365*24*60*60 || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure {
		t.Errorf("the switch's cookie %+v; want ar for a year on / , HttpOnly, Lax, not Secure over plain HTTP", ck)
	}
	back := c.Get(res.Header.Get("Location"))
	if got := pageLanguage(t, back); got != "ar" {
		t.Errorf("the page after the switch is in %q, want ar", got)
	}
	if back.Doc(t).Find(`[data-testid="code-form"]`).Length() != 1 {
		t.Errorf("the switch lost the customer's place: no code form on the page it came back to")
	}
}

// TestTheLanguageSwitchRefusesWhatItMustNotDo: a post without the form's
// token is refused (CSRF, as every customer form); a next that leaves the
// site, or is no path, comes back home instead; a language the pages do
// not ship changes nothing.
func TestTheLanguageSwitchRefusesWhatItMustNotDo(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	_, link := b.PendingRefund(t)
	c := b.Client(t)
	page := c.Get(link)
	_, csrf, _ := switchForm(t, page)
	if res := c.Post("/locale", url.Values{"next": {link}, "locale": {"fr"}}); res.StatusCode != http.StatusForbidden || hasLocaleCookie(res) {
		t.Errorf("a switch without the token: %d, cookie set %v; want 403 and none", res.StatusCode, hasLocaleCookie(res))
	}
	for _, next := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example", "/%2F%2Fevil.example", "javascript:alert(1)", ""} {
		res := c.Post("/locale", url.Values{"_csrf": {csrf}, "next": {next}, "locale": {"de"}})
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
			t.Errorf("next %q: %d to %q, want 303 to /", next, res.StatusCode, res.Header.Get("Location"))
		}
	}
	res := c.Post("/locale", url.Values{"_csrf": {csrf}, "next": {link}, "locale": {"xx-unknown"}})
	if res.StatusCode != http.StatusSeeOther || hasLocaleCookie(res) {
		t.Errorf("an unshipped language: %d, cookie set %v; want 303 and no cookie", res.StatusCode, hasLocaleCookie(res))
	}
}

func hasLocaleCookie(res webtest.Response) bool {
	for _, k := range res.Cookies() {
		if k.Name == locale.CookieName {
			return true
		}
	}
	return false
}
