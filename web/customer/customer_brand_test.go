package customer_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/consent"
	"countersign/internal/controlplane"
	"countersign/internal/receipts"
	"countersign/internal/shopadapter"
)

// withZone has c's browser keep zone as its own, as customer.js does.
func withZone(c *webtest.Client, zone string) {
	u, _ := url.Parse(c.Stack.Server.URL)
	c.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: "cs_zone", Value: url.QueryEscape(zone), Path: "/"}})
}

// TestCustomerPagesSpeakForTheShop: a customer's page is the shop's: the
// header names it, the title says the request in words and no raw id,
// the footer says the shop uses Countersign and which zone the times are
// in — the shop's until the browser gives its own, never silently UTC —
// and the code comes by mail from "<shop> via Countersign" with a subject
// in words. A staff page keeps the console's frame.
func TestCustomerPagesSpeakForTheShop(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	res := c.Open(link)
	doc := res.Doc(t)
	title := doc.Find("title").Text()
	if !strings.HasSuffix(title, " · "+webtest.ShopName) || strings.Contains(title, "ord_") || strings.Contains(title, inv.Quote.Target.ID) ||
		!strings.Contains(title, "Walnut desk lamp") {
		t.Errorf("title %q, want the request in words and the shop's name, no id", title)
	}
	if got := webtest.TextByTestID(res, t, "brand-name"); got != webtest.ShopName || strings.Contains(doc.Find("header").Text(), "Countersign") {
		t.Errorf("header names %q (%q), want only the shop", got, webtest.Squash(doc.Find("header").Text()))
	}
	footer := unisolated(webtest.Squash(doc.Find(`[data-testid="customer-footer"]`).Text()))
	if !strings.Contains(footer, webtest.ShopName+" uses Countersign") || !strings.Contains(footer, "Times are in America/Los_Angeles time.") {
		t.Errorf("footer %q, want the shop and its zone named", footer)
	}
	// The clock is 09:00 UTC on April 1, 2026; the deadline is 30 minutes on.
	if d := webtest.TextByTestID(res, t, "deadline"); !strings.Contains(d, "Apr 1, 02:30 PDT") {
		t.Errorf("deadline %q, want it in the shop's zone (Apr 1, 02:30 PDT)", d)
	}
	sent := b.Mail.Sent()
	m := sent[len(sent)-1]
	if m.FromName != webtest.ShopName+" via Countersign" || !strings.Contains(m.Subject, webtest.ShopName) || strings.Contains(m.Subject, "ord_") {
		t.Errorf("code mail from %q, subject %q: want the shop's name in both and no id", m.FromName, m.Subject)
	}
	if !strings.Contains(m.Body, "at "+webtest.ShopName+"\n") {
		t.Errorf("the code mail does not name the shop:\n%s", m.Body)
	}

	// The browser's own zone, once told, is used and said.
	withZone(c, "Europe/Paris")
	res = c.Get("/requests/" + inv.ID)
	if d := webtest.TextByTestID(res, t, "deadline"); !strings.Contains(d, "Apr 1, 11:30 CEST") {
		t.Errorf("deadline %q, want it in the customer's zone (Apr 1, 11:30 CEST)", d)
	}
	if z := unisolated(webtest.Squash(webtest.TextByTestID(res, t, "time-zone"))); z != "Times are in your time zone (Europe/Paris)." {
		t.Errorf("footer zone %q", z)
	}
	// A zone that is not one falls back to the shop's.
	withZone(c, "Mars/Olympus_Mons")
	if d := webtest.TextByTestID(c.Get("/requests/"+inv.ID), t, "deadline"); !strings.Contains(d, "02:30 PDT") {
		t.Errorf("deadline %q with a bad zone, want the shop's", d)
	}

	staff := b.Client(t)
	staff.MustSignIn(b.Users[accounts.Agent])
	q := staff.Get("/queue")
	qd := q.Doc(t)
	if brand := strings.TrimSpace(qd.Find("header .brand").Text()); brand != "Countersign" || !strings.HasSuffix(qd.Find("title").Text(), " · Countersign") ||
		qd.Find(`[data-testid="customer-footer"]`).Length() != 0 {
		t.Errorf("a staff page's frame: brand %q, title %q", brand, qd.Find("title").Text())
	}
}

// TestCustomerPageSaysCodesInWords: the cancellation's status change and
// its reason read as sentences, not "active → cancelled" and "Reason too
// expensive"; an approved request says it is being sent to the shop.
func TestCustomerPageSaysCodesInWords(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv := b.ProposeFor(t, b.CustomerTask(t, webtest.Jordan), "cancel_subscription",
		map[string]any{"subscription_id": "Pro plan for acme.example", "reason_code": "too_expensive", "effective": "end_of_period"}, "")
	c := b.Client(t)
	res := c.Open(b.Link(t, inv, webtest.Jordan))
	doc := res.Doc(t)
	if got := strings.TrimSpace(doc.Find(`[data-testid="line-sentence"]`).First().Text()); got != "Your subscription will be cancelled." {
		t.Errorf("status line %q, want it in words", got)
	}
	quote := webtest.Squash(doc.Find(`.quote`).Text())
	if !strings.Contains(quote, "Reason: too expensive") || doc.Find(`[data-testid="line-values"] [data-testid="line-from"]`).First().Text() != "active" ||
		doc.Find(`[data-testid="line-values"] [data-testid="line-to"]`).First().Text() != "cancelled" {
		t.Errorf("the quote reads %q, want \"Reason: too expensive\" and the status values under its sentence", quote)
	}
	c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {c.PageCSRF(res)}})
	if got := webtest.TextByTestID(c.Get("/requests/"+inv.ID), t, "status-badge"); got != "Approved — we're sending it to "+webtest.ShopName+" now" {
		t.Errorf("approved badge %q", got)
	}
}

// TestCustomerAddressChangeStacksNowAndAfter: an address change shows the
// address now and after, each whole under its own label, not one run-on
// line.
func TestCustomerAddressChangeStacksNowAndAfter(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv := b.ProposeFor(t, b.CustomerTask(t, webtest.Jordan), "change_shipping_address",
		map[string]any{"order_id": "standing desk mat", "address": webtest.JordanAddress}, "")
	res := b.Client(t).Open(b.Link(t, inv, webtest.Jordan))
	na := res.Doc(t).Find(`[data-testid="now-after"]`)
	var labels []string
	na.Find("dt").Each(func(_ int, s *goquery.Selection) { labels = append(labels, s.Text()) })
	l := inv.Quote.Lines[0]
	if strings.Join(labels, "/") != "Now/After" || strings.TrimSpace(na.Find(`[data-testid="line-from"]`).Text()) != l.From ||
		strings.TrimSpace(na.Find(`[data-testid="line-to"]`).Text()) != l.To {
		t.Errorf("address change: labels %v, now %q, after %q; want Now %q / After %q", labels,
			na.Find(`[data-testid="line-from"]`).Text(), na.Find(`[data-testid="line-to"]`).Text(), l.From, l.To)
	}
}

// TestMyRequestsGroupsTheCustomersOwn: a signed-in customer's list groups
// their requests as "Waiting for you", "In progress" (with our team) and
// "Finished" (a declined one among them); a catalogue edit proposed in their conversation is an
// operator's action and is not listed; two refunds alike in title are told
// apart by order, items, amount and time.
func TestMyRequestsGroupsTheCustomersOwn(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	ctx := context.Background()
	m := b.Users[accounts.Manager]
	p, err := b.Control.Policy(ctx, "shop", "resend_receipt")
	if err != nil {
		t.Fatal(err)
	}
	p.Stage = controlplane.StagePropose
	if _, err := b.Control.ChangePolicy(ctx, controlplane.UserActor(m.ID, string(accounts.Manager), m.Name), p, p.Version, "our team approves receipts"); err != nil {
		t.Fatal(err)
	}
	task := b.CustomerTask(t, webtest.Jordan)
	first := b.ProposeFor(t, task, "issue_refund", map[string]any{"order_id": "walnut lamp", "amount_cents": 1000, "reason_code": "damaged"}, "")
	b.Clock.Advance(3 * 60e9)
	second := b.ProposeAny(t, b.CustomerTask(t, webtest.Jordan), "issue_refund", map[string]any{"order_id": "walnut lamp", "amount_cents": 1000, "reason_code": "damaged"})
	approval := b.ProposeAny(t, task, "resend_receipt", map[string]any{"invoice_id": "paid Pro invoice"})
	catalogue := b.ProposeFor(t, task, "update_product_description", map[string]any{"product_id": "walnut lamp", "description": "Solid walnut, linen shade."}, "")
	done := b.ProposeFor(t, task, "reinstate_subscription", map[string]any{"subscription_id": "Photo add-on"}, "")
	if approval.State != controlplane.AwaitingApproval {
		t.Fatalf("the receipt is %s, want awaiting approval", approval.State)
	}

	u, err := b.Accounts.Create(ctx, accounts.NewUser{Email: webtest.Jordan, Name: "Jordan Lee", Role: accounts.Customer, Password: "correct horse jordan"})
	if err != nil {
		t.Fatal(err)
	}
	c := b.Client(t)
	c.MustSignIn(webtest.User{User: u, Password: "correct horse jordan"})
	c.Post("/requests/"+done.ID+"/decline", url.Values{"_csrf": {c.PageCSRF(c.Get("/requests/" + done.ID))}})

	res := c.Get("/requests")
	doc := res.Doc(t)
	group := func(testid string) []string {
		var out []string
		doc.Find(`[data-testid="` + testid + `"] [data-testid="request-row"]`).Each(func(_ int, s *goquery.Selection) {
			id, _ := s.Attr("data-id")
			out = append(out, id)
		})
		return out
	}
	waiting, progress, finished := group("waiting"), group("in-progress"), group("done")
	wantWaiting := []string{first.ID, second.ID}
	if second.State == controlplane.AwaitingApproval {
		wantWaiting = wantWaiting[:1]
	}
	if strings.Join(waiting, ",") != strings.Join(wantWaiting, ",") {
		t.Errorf("waiting for you: %v, want %v", waiting, wantWaiting)
	}
	if !contains(progress, approval.ID) || contains(finished, approval.ID) {
		t.Errorf("in progress %v, done %v: want the request waiting for our team in progress", progress, finished)
	}
	if strings.Join(finished, ",") != done.ID {
		t.Errorf("done: %v, want the declined request %s", finished, done.ID)
	}
	if strings.Contains(res.Text, catalogue.ID) || strings.Contains(doc.Find("main").Text(), "description") {
		t.Error("My requests lists the catalogue edit, an operator's action")
	}
	for _, h := range []string{"Waiting for you", "In progress", "Finished"} {
		if !strings.Contains(doc.Find("main h2").Text(), h) {
			t.Errorf("no %q heading", h)
		}
	}
	// The group holds the declined request: it is finished, not "done".
	if strings.Contains(doc.Find("main h2").Text(), "Done") {
		t.Errorf("a group of declined requests is headed \"Done\": %q", doc.Find("main h2").Text())
	}
	if strings.Contains(doc.Find("main").Text(), "Earlier") {
		t.Error("the list still has an \"Earlier\" group")
	}
	// The two refunds: same title, told apart by what each row says.
	rows := map[string]string{}
	for _, id := range []string{first.ID, second.ID} {
		row := doc.Find(`[data-testid="request-row"][data-id="` + id + `"]`)
		for _, f := range []string{"row-reference", "row-items", "row-amount", "row-when"} {
			if strings.TrimSpace(row.Find(`[data-testid="`+f+`"]`).Text()) == "" {
				t.Errorf("row %s has no %s", id, f)
			}
		}
		if got := strings.TrimSpace(row.Find(`[data-testid="row-amount"]`).Text()); got != "$10.00" {
			t.Errorf("row %s amount %q", id, got)
		}
		rows[id] = webtest.Squash(row.Text())
	}
	if rows[first.ID] == rows[second.ID] {
		t.Errorf("two refunds read the same: %q", rows[first.ID])
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// completedRefund has the customer confirm Jordan's refund by code and
// the console carry it out; it returns the request, its link and the
// customer's client.
func completedRefund(t *testing.T, b *webtest.Stack) (controlplane.Invocation, *webtest.Client) {
	t.Helper()
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	page := c.Open(link)
	c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {c.PageCSRF(page)}})
	if _, err := b.Control.Dispatch(context.Background(), inv.ID); err != nil {
		t.Fatal(err)
	}
	done := b.Invocation(t, inv.ID)
	if done.State != controlplane.Completed {
		t.Fatalf("after dispatch: %s", done.State)
	}
	return done, c
}

// TestCustomerReceipt: a completed request's page has a Receipt section —
// what changed, the shop's reference, when it was verified, the download
// and how to check it — and the download is the signed receipt, checkable
// against the published key, for this customer only; a request not done
// has none.
func TestCustomerReceipt(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, c := completedRefund(t, b)
	res := c.Get("/requests/" + inv.ID)
	if res.Doc(t).Find(`[data-testid="receipt"]`).Length() != 1 {
		t.Fatalf("no receipt section on a completed request:\n%s", res.Text)
	}
	if got := webtest.TextByTestID(res, t, "receipt-reference"); got != inv.Result.ShortReference {
		t.Errorf("receipt reference %q, want %q", got, inv.Result.ShortReference)
	}
	if got := webtest.TextByTestID(res, t, "receipt-verified"); !inShopZone(got) {
		t.Errorf("verified %q, want a time in the shop's zone", got)
	}
	if got := webtest.Squash(webtest.TextByTestID(res, t, "receipt-changed")); !strings.Contains(got, "$42.10") {
		t.Errorf("what changed: %q, want the refund's amount", got)
	}
	// For people: in the shop's name, what was done, when, who said yes
	// and how; the signed file explained in one plain sentence, with no
	// key's address and no internal id anywhere in the receipt.
	receipt := res.Doc(t).Find(`[data-testid="receipt"]`)
	if got := webtest.Squash(receipt.Find("h2").Text()); got != "Receipt from Harbour & Pine" {
		t.Errorf("the receipt's heading %q, want it in the shop's name", got)
	}
	if got := webtest.TextByTestID(res, t, "receipt-title"); got == "" || strings.Contains(got, inv.Target.ID) {
		t.Errorf("what was done: %q", got)
	}
	if got := webtest.TextByTestID(res, t, "receipt-done"); !inShopZone(got) {
		t.Errorf("when: %q, want a time in the shop's zone", got)
	}
	if got := webtest.TextByTestID(res, t, "receipt-who"); !strings.HasPrefix(got, "You confirmed this on ") || !strings.HasSuffix(got, ", with the link we e-mailed you.") {
		t.Errorf("who confirmed: %q", got)
	}
	how := webtest.Squash(webtest.TextByTestID(res, t, "receipt-how"))
	if !strings.Contains(how, "Download the signed file: a copy of this receipt for your records") || strings.Count(how, ".") != 1 {
		t.Errorf("the signed file is not explained in one plain sentence: %q", how)
	}
	if text, _ := receipt.Html(); strings.Contains(text, "jwks") || strings.Contains(text, "/api/") || strings.Contains(text, inv.Result.Reference) ||
		strings.Contains(strings.ReplaceAll(text, "/requests/"+inv.ID+"/receipt", ""), inv.ID) || strings.Contains(text, inv.Target.ID) {
		t.Errorf("the receipt shows a key's address or an internal id:\n%s", text)
	}
	href, _ := res.Doc(t).Find(`[data-testid="receipt-download"]`).Attr("href")
	if href != "/requests/"+inv.ID+"/receipt" {
		t.Fatalf("download link %q", href)
	}
	dl := c.Get(href)
	if dl.StatusCode != http.StatusOK || dl.Header.Get("Content-Type") != "application/jose" ||
		!strings.HasPrefix(dl.Header.Get("Content-Disposition"), "attachment;") {
		t.Fatalf("download: %d %q %q", dl.StatusCode, dl.Header.Get("Content-Type"), dl.Header.Get("Content-Disposition"))
	}
	var jwks struct {
		Keys []struct {
			X string `json:"x"`
		} `json:"keys"`
	}
	if err := json.Unmarshal([]byte(b.Client(t).Get("/api/v1/receipts/jwks.json").Text), &jwks); err != nil || len(jwks.Keys) != 1 {
		t.Fatalf("jwks: %v", err)
	}
	pub, _ := base64.RawURLEncoding.DecodeString(jwks.Keys[0].X)
	payload, err := receipts.Verify(dl.Text, ed25519.PublicKey(pub))
	if err != nil {
		t.Fatalf("the downloaded receipt does not verify: %v", err)
	}
	var claims struct {
		Sub        string          `json:"sub"`
		State      string          `json:"state"`
		Args       json.RawMessage `json:"args"`
		ArgsDigest string          `json:"args_digest"`
		Consent    *struct {
			consent.Evidence
			Quote    json.RawMessage `json:"quote"`
			ArgsHash string          `json:"args_hash"`
			Customer string          `json:"customer"`
		} `json:"consent"`
	}
	_ = json.Unmarshal(payload, &claims)
	if claims.Sub != inv.ID || claims.State != "completed" {
		t.Errorf("receipt claims %+v", claims)
	}
	// The customer's yes is in it: how they proved it, what they saw.
	if cs := claims.Consent; cs == nil || cs.Proof != "link" || cs.Decision != consent.Confirm || cs.QuoteVersion == 0 ||
		cs.Verify(inv.ID, cs.Quote) != nil || cs.ArgsHash != claims.ArgsDigest || claims.ArgsDigest != hex.EncodeToString(inv.ArgsHash) {
		t.Errorf("the receipt's consent %+v, args_digest %q, want the mail link's confirmation of the quote shown", cs, claims.ArgsDigest)
	}

	// Another customer, a visitor and a request not done get no receipt.
	other := b.Client(t)
	other.Open(b.Link(t, b.ProposeFor(t, b.CustomerTask(t, "hannah.weiss@example.de"), "reinstate_subscription",
		map[string]any{"subscription_id": "my Pro plan"}, ""), "hannah.weiss@example.de"))
	if r := other.Get(href); r.StatusCode != http.StatusNotFound {
		t.Errorf("another customer's download: %d", r.StatusCode)
	}
	if r := b.Client(t).Get(href); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("a visitor's download: %d", r.StatusCode)
	}
	pending, link := b.PendingRefund(t)
	pc := b.Client(t)
	pr := pc.Open(link)
	if pr.Doc(t).Find(`[data-testid="receipt"]`).Length() != 0 {
		t.Error("a pending request shows a receipt")
	}
	if r := pc.Get("/requests/" + pending.ID + "/receipt"); r.StatusCode != http.StatusConflict || !strings.Contains(r.Text, "it is not done yet") {
		t.Errorf("a pending request's download: %d, want 409 saying it is not done yet", r.StatusCode)
	}
	// A request the customer declined never will have one, and is told so.
	pc.Post("/requests/"+pending.ID+"/decline", url.Values{"_csrf": {pc.PageCSRF(pc.Get("/requests/" + pending.ID))}})
	if r := pc.Get("/requests/" + pending.ID + "/receipt"); r.StatusCode != http.StatusConflict ||
		!strings.Contains(r.Text, "This request was not carried out, so there is no receipt.") || strings.Contains(r.Text, "not done yet") {
		t.Errorf("a declined request's download: %d %s, want 409 saying it was not carried out", r.StatusCode, webtest.Squash(r.Text))
	}
}

// TestMyRequestsOfTwoShopsSpeakForNeither: a customer whose requests are
// with two businesses sees My requests in Countersign's frame, naming
// neither (one shop's name over the other's request misleads); requests
// of one shop only keep its name.
func TestMyRequestsOfTwoShopsSpeakForNeither(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	ctx := context.Background()
	u, err := b.Accounts.Create(ctx, accounts.NewUser{Email: webtest.Jordan, Name: "Jordan Lee", Role: accounts.Customer, Password: "correct horse jordan"})
	if err != nil {
		t.Fatal(err)
	}
	c := b.Client(t)
	c.MustSignIn(webtest.User{User: u, Password: "correct horse jordan"})
	b.ProposeFor(t, b.CustomerTask(t, webtest.Jordan), "reinstate_subscription", map[string]any{"subscription_id": "Photo add-on"}, "")
	if got := webtest.TextByTestID(c.Get("/requests"), t, "brand-name"); got != webtest.ShopName {
		t.Fatalf("one shop's requests: header names %q, want %q", got, webtest.ShopName)
	}

	// A second business, the same demo shop under another name.
	other := adapter.Brand{Name: "Quay Outfitters", Zone: time.UTC}
	b.Web.Registry().Connect(shopadapter.New(shopadapter.Config{Name: "quay", BaseURL: b.ShopURL, Token: b.Shop.Token(),
		Ledger: adapter.NewLedger(b.Store, b.Clock.Now), Now: b.Clock.Now, Brand: other}))
	owner := b.Users[accounts.Manager].ID
	if err := b.Control.EnsurePolicies(ctx, &owner); err != nil {
		t.Fatal(err)
	}
	m := b.Users[accounts.Manager]
	p, err := b.Control.Policy(ctx, "quay", "reinstate_subscription")
	if err != nil {
		t.Fatal(err)
	}
	p.Stage, p.ConfirmationWindow = controlplane.StageAssisted, 30*time.Minute
	if _, err := b.Control.ChangePolicy(ctx, controlplane.UserActor(m.ID, string(accounts.Manager), m.Name), p, p.Version, "customers confirm"); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"subscription_id": "Photo add-on"})
	if _, err := b.Control.Propose(ctx, controlplane.Proposal{TaskID: b.CustomerTask(t, webtest.Jordan).ID, System: "quay", Action: "reinstate_subscription", Args: raw,
		Actor: controlplane.AssistantActor("asst_test", "Test assistant")}); err != nil {
		t.Fatal(err)
	}
	res := c.Get("/requests")
	doc := res.Doc(t)
	if n := doc.Find(`[data-testid="request-row"]`).Length(); n != 2 {
		t.Fatalf("%d rows, want the two shops' requests", n)
	}
	header, title := webtest.Squash(doc.Find("header").Text()), doc.Find("title").Text()
	if strings.Contains(header, webtest.ShopName) || strings.Contains(header, other.Name) || !strings.Contains(header, "Countersign") ||
		strings.Contains(title, webtest.ShopName) || strings.Contains(title, other.Name) {
		t.Errorf("two shops' requests: header %q, title %q; want Countersign's and neither shop's name", header, title)
	}
	if doc.Find(`[data-testid="customer-footer"]`).Length() != 1 || strings.Contains(webtest.Squash(doc.Find(`[data-testid="customer-footer"]`).Text()), "uses Countersign") {
		t.Errorf("footer %q, want the customer frame's, naming no shop", webtest.Squash(doc.Find("footer").Text()))
	}
}

// TestCustomerSignInAndHomeAreTheShops: the sign-in on the way to a
// customer's requests and a customer's home are in the customer frame —
// the shop's name when it is known, else Countersign's customer frame —
// while the staff's sign-in keeps the console's.
func TestCustomerSignInAndHomeAreTheShops(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	c := b.Client(t)
	if res := c.Get("/sign-in?next=%2Frequests"); webtest.TextByTestID(res, t, "brand-name") != webtest.ShopName || res.Doc(t).Find(`[data-testid="customer-footer"]`).Length() != 1 {
		t.Errorf("a customer's sign-in: header %q, want the shop's frame", webtest.Squash(res.Doc(t).Find("header").Text()))
	}
	if doc := c.Get("/sign-in").Doc(t); doc.Find(`[data-testid="brand-name"]`).Length() != 0 || doc.Find(`[data-testid="customer-footer"]`).Length() != 0 {
		t.Errorf("the staff's sign-in: header %q, want the console's frame", webtest.Squash(doc.Find("header").Text()))
	}
	u, err := b.Accounts.Create(t.Context(), accounts.NewUser{Email: webtest.Jordan, Name: "Jordan Lee", Role: accounts.Customer, Password: "correct horse jordan"})
	if err != nil {
		t.Fatal(err)
	}
	c.MustSignIn(webtest.User{User: u, Password: "correct horse jordan"})
	if res := c.Get("/"); webtest.TextByTestID(res, t, "brand-name") != webtest.ShopName || res.Doc(t).Find(`[data-testid="customer-footer"]`).Length() != 1 {
		t.Errorf("a customer's home: header %q, want the shop's frame", webtest.Squash(res.Doc(t).Find("header").Text()))
	}

	// No shop known (no system connected): Countersign's customer frame.
	plain := webtest.New(t)
	doc := plain.Client(t).Get("/sign-in?next=%2Frequests").Doc(t)
	if got := strings.TrimSpace(doc.Find("header .brand").Text()); got != "Countersign" || doc.Find(`[data-testid="customer-footer"]`).Length() != 1 {
		t.Errorf("a customer's sign-in with no shop: brand %q, %d customer footers; want Countersign's customer frame", got, doc.Find(`[data-testid="customer-footer"]`).Length())
	}
}
