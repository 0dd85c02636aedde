package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
)

func TestQueueBulkApprovesLowRiskAfterConfirmation(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	small := []controlplane.Invocation{f.Describe(t, "Now in oak."), f.Describe(t, "Now in walnut.")}
	big := f.Refund(t, f.NewOrder(t), 4200) // irreversible: not low-risk
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	res := c.Get("/queue")
	bulk := webtest.CardForm(t, res, "bulk-form")
	form := url.Values{"_csrf": {bulk.Get("_csrf")}}
	res.Doc(t).Find(`[data-testid="bulk-form"] input[name="id"]`).Each(func(_ int, s *goquery.Selection) {
		v, _ := s.Attr("value")
		form.Add("id", v)
	})
	form.Add("id", big.ID)
	confirm := c.Post("/queue/bulk", form)
	if confirm.StatusCode != http.StatusOK {
		t.Fatalf("bulk review: %d\n%s", confirm.StatusCode, confirm.Text)
	}
	if strings.Contains(confirm.Text, big.ID) {
		t.Fatalf("the confirmation lists a request above the automatic limit")
	}
	final := url.Values{}
	confirm.Doc(t).Find(`[data-testid="bulk-confirm-form"] input`).Each(func(_ int, s *goquery.Selection) {
		n, _ := s.Attr("name")
		v, _ := s.Attr("value")
		final.Add(n, v)
	})
	if res := c.Post("/queue/bulk/approve", final); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("bulk approve: %d", res.StatusCode)
	}
	for _, inv := range small {
		if got := b.Invocation(t, inv.ID).State; got != controlplane.Approved {
			t.Errorf("%s is %s after bulk approval", inv.ID, got)
		}
	}
	if got := b.Invocation(t, big.ID).State; got != controlplane.AwaitingApproval {
		t.Errorf("the large refund is %s, want still pending", got)
	}
}

func TestQueueEditFormNestsObjectArgumentsInAFieldset(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	inv := f.AddressChange(t)
	if inv.State != controlplane.AwaitingApproval {
		t.Fatalf("proposal is %s", inv.State)
	}
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	page := c.Get("/queue/" + inv.ID)
	city := page.Doc(t).Find(`[data-testid="edit-form"] fieldset input[name="arg.address.city"]`)
	if v, _ := city.Attr("value"); v != "Springfield" {
		t.Fatalf("no address fieldset with the city in the edit form (value %q)", v)
	}
	form := url.Values{}
	page.Doc(t).Find(`[data-testid="edit-form"] input`).Each(func(_ int, s *goquery.Selection) {
		n, _ := s.Attr("name")
		v, _ := s.Attr("value")
		form.Set(n, v)
	})
	form.Set("arg.address.city", "Shelbyville")
	if res := c.Post("/queue/"+inv.ID+"/edit", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit the city: %d\n%s", res.StatusCode, res.Text)
	}
	diff := c.Get("/queue/" + inv.ID).Doc(t).Find(`[data-testid="diff"]`).Text()
	if !strings.Contains(diff, "Address city") || strings.Contains(diff, "address.city") || !strings.Contains(diff, "Shelbyville") {
		t.Fatalf("the diff does not show the city change:\n%s", diff)
	}
}
