package customer_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"countersign/internal/locale"
	"countersign/web/webtest"
)

// TestTheReferenceReadsTheSameInEveryLanguage: a German reader's done
// page and receipt name a completed change by a reference with no English
// word in it ("#C17E55", not "Address change #C17E55"), and it is the
// very string the assistant is given (say, result.short_reference), so
// the two name the change alike whatever language each speaks.
func TestTheReferenceReadsTheSameInEveryLanguage(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	b.StageForCustomer(t, "change_shipping_address")
	task := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": webtest.Jordan,
		"conversation_id": "conv-ref-de", "allowed_actions": []string{"change_shipping_address"}, "write_budget": 2,
		"inflight_limit": 1, "rate_per_minute": 30}).Want(t, http.StatusCreated)
	inv := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+task.JSON["id"].(string)+"/invocations",
		map[string]any{"action": "change_shipping_address", "args": map[string]any{"order_id": "standing desk mat",
			"address": webtest.JordanAddress}}).Want(t, http.StatusCreated)
	id := inv.JSON["id"].(string)
	c := b.Client(t)
	u, _ := url.Parse(b.Server.URL)
	c.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: locale.CookieName, Value: "de", Path: "/"}})
	tok := c.PageCSRF(c.Open(strings.TrimPrefix(inv.JSON["next"].(map[string]any)["url"].(string), b.Server.URL)))
	if res := c.Post("/requests/"+id+"/confirm", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm: %d\n%s", res.StatusCode, res.Text)
	}
	if _, err := b.Control.Dispatch(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	done := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id, nil).Want(t, http.StatusOK)
	if done.JSON["state"] != "completed" {
		t.Fatalf("after dispatch: %s", done.Body)
	}
	page := c.Get("/requests/" + id)
	if lang := page.Doc(t).Find("html").AttrOr("lang", ""); lang != "de" {
		t.Fatalf("the page is in %q, want de", lang)
	}
	neutral := regexp.MustCompile(`^#[0-9A-F]{6}$`)
	ref := webtest.TextByTestID(page, t, "reference")
	for what, got := range map[string]string{"done page": ref, "receipt": webtest.TextByTestID(page, t, "receipt-reference")} {
		if !neutral.MatchString(got) {
			t.Errorf("the German %s names the change %q, want only its number (#XXXXXX), no English word", what, got)
		}
	}
	if headline := webtest.TextByTestID(page, t, "status-headline"); !strings.Contains(headline, "Referenz: "+ref) {
		t.Errorf("the German headline %q does not read %q", headline, "Referenz: "+ref)
	}
	result, _ := done.JSON["result"].(map[string]any)
	if result["short_reference"] != ref {
		t.Errorf("the API's short_reference %v, the page's %q", result["short_reference"], ref)
	}
	if say := done.JSON["say"].(string); !strings.HasSuffix(say, " Reference: "+ref+".") {
		t.Errorf("say %q does not give the customer's reference %q", say, ref)
	}
}
