package console_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/factors/softkey"
	"countersign/web/webtest"
)

// requireStepUp makes the policies of actions ask for a passkey on every
// approval.
func requireStepUp(t *testing.T, b *webtest.Stack, actions ...string) { b.RequireStepUp(t, actions...) }

// shown is what a step-up page showed: the version and arguments hash
// its form carries.
type shown struct{ version, hash string }

func stepUpPage(t *testing.T, c *webtest.Client, id string) shown {
	t.Helper()
	form := webtest.CardForm(t, c.Get("/queue/"+id+"/step-up"), "step-up-form")
	return shown{form.Get("expected_version"), form.Get("args_hash")}
}

// beginStepUp posts the step-up's begin as static/passkey.js does.
func beginStepUp(t *testing.T, c *webtest.Client, id string, s shown) (int, json.RawMessage) {
	t.Helper()
	return postJSON(t, c, "/queue/"+id+"/step-up/begin", c.CSRF("/queue/"+id+"/step-up"),
		map[string]string{"expected_version": s.version, "args_hash": s.hash})
}

// finishStepUp posts k's answer to opts at origin to card id's step-up.
func finishStepUp(t *testing.T, c *webtest.Client, id string, s shown, k *softkey.Key, opts json.RawMessage, origin string) (int, reply) {
	t.Helper()
	cred, err := k.Get(opts, "localhost", origin)
	if err != nil {
		t.Fatal(err)
	}
	status, raw := postJSON(t, c, "/queue/"+id+"/step-up", c.CSRF("/queue/"+id+"/step-up"),
		map[string]any{"expected_version": s.version, "args_hash": s.hash, "credential": json.RawMessage(cred)})
	return status, decode(t, raw)
}

// stepUpSetup is a shop stack served with passkeys, whose product
// descriptions need a passkey to approve, an agent signed in there with a
// passkey, and a card waiting.
func stepUpSetup(t *testing.T) (*webtest.Stack, *webtest.Shopper, *webtest.Client, *softkey.Key, string) {
	t.Helper()
	b := webtest.New(t, webtest.WithShop())
	pk, origin := passkeyConsole(t, b)
	requireStepUp(t, b, "update_product_description")
	c := pk.Client(t)
	agent := b.Users[accounts.Agent]
	c.MustSignIn(agent)
	k, status, r := addPasskey(t, c, agent, "Laptop", origin)
	if status != http.StatusOK {
		t.Fatalf("adding the passkey: %d %+v", status, r)
	}
	return b, webtest.NewShopper(t, b), c, k, origin
}

// TestStepUpPageApprovesWithThePasskey: a card whose policy asks for a
// passkey offers "Approve with your passkey" instead of Approve, in the
// queue and on its page; its step-up page shows what is approved, and the
// passkey's answer approves it with an assertion that verifies for the
// card's id, version and arguments hash.
func TestStepUpPageApprovesWithThePasskey(t *testing.T) {
	t.Parallel()
	b, f, c, k, origin := stepUpSetup(t)
	inv := f.Describe(t, "Now in oak.")
	queue := c.Get("/queue").Doc(t)
	if queue.Find(`[data-testid="card-`+inv.ID+`"] a[data-testid="approve-step-up"]`).AttrOr("href", "") != "/queue/"+inv.ID+"/step-up" {
		t.Fatal("the queue's card does not link to its step-up page")
	}
	card := c.Get("/queue/" + inv.ID).Doc(t)
	if card.Find(`[data-testid="approve-form"]`).Length() != 0 || card.Find(`a[data-testid="approve-step-up"]`).Length() != 1 {
		t.Fatal("the card's page offers a plain Approve, or no \"Approve with your passkey\"")
	}
	page := c.Get("/queue/" + inv.ID + "/step-up")
	if page.StatusCode != http.StatusOK || !strings.Contains(page.Text, "Now in oak.") {
		t.Fatalf("the step-up page (%d) does not show what is approved", page.StatusCode)
	}
	s := stepUpPage(t, c, inv.ID)
	if s.version != strconv.Itoa(int(inv.Version)) || s.hash != hex.EncodeToString(inv.ArgsHash) {
		t.Fatalf("the page shows %+v, want the card's version %d and hash", s, inv.Version)
	}
	status, opts := beginStepUp(t, c, inv.ID, s)
	if status != http.StatusOK {
		t.Fatalf("begin: %d %s", status, opts)
	}
	if status, r := finishStepUp(t, c, inv.ID, s, k, opts, origin); status != http.StatusOK || r.Next != "/queue?decided="+inv.ID {
		t.Fatalf("the passkey's answer: %d %+v, want the queue next", status, r)
	}
	got := b.StepUps(t, inv.ID)
	if len(got) != 1 {
		t.Fatalf("the approval kept %d step-ups, want the passkey's one", len(got))
	}
	if err := got[0].Verify(inv.ID, int64(inv.Version), inv.ArgsHash); err != nil {
		t.Fatalf("the assertion kept with the approval does not verify for the card: %v", err)
	}
	if st := b.InvocationState(t, inv.ID); st == controlplane.AwaitingApproval {
		t.Fatal("the card still waits for approval")
	}
	if decided := c.Get("/queue?decided=" + url.QueryEscape(inv.ID)).Text; !strings.Contains(decided, "Approved") {
		t.Fatal("the queue does not say the card was approved")
	}
}

// TestStepUpForAnotherCardOrVersionRefused: an answer made on one card's
// step-up page does not approve another card, nor the same card after an
// edit changed its version; a page that showed an older version is told
// to look again.
func TestStepUpForAnotherCardOrVersionRefused(t *testing.T) {
	t.Parallel()
	b, f, c, k, origin := stepUpSetup(t)
	one, two := f.Describe(t, "Now in oak."), f.Describe(t, "Now in ash.")

	sOne, sTwo := stepUpPage(t, c, one.ID), stepUpPage(t, c, two.ID)
	_, opts := beginStepUp(t, c, one.ID, sOne)
	if status, r := finishStepUp(t, c, two.ID, sTwo, k, opts, origin); status != http.StatusUnprocessableEntity || r.Error == "" {
		t.Fatalf("card one's step-up sent to card two: %d %+v, want 422 with what to do", status, r)
	}

	_, opts = beginStepUp(t, c, one.ID, sOne)
	agent := b.Users[accounts.Agent]
	raw, _ := json.Marshal(map[string]any{"product_id": productOf(t, one), "description": "Now in dark oak."})
	if _, err := b.Control.StaffDecide(context.Background(), controlplane.StaffDecision{Actor: controlplane.UserActor(agent.ID, string(agent.Role), agent.Name),
		InvocationID: one.ID, Verb: controlplane.StaffEdit, Args: raw}); err != nil {
		t.Fatal(err)
	}
	if status, r := finishStepUp(t, c, one.ID, sOne, k, opts, origin); status != http.StatusConflict || r.Next != "/queue/"+one.ID+"/step-up" {
		t.Fatalf("a step-up from a page of the version before the edit: %d %+v, want 409 and the page again", status, r)
	}
	_, opts = beginStepUp(t, c, one.ID, sOne)
	now := stepUpPage(t, c, one.ID)
	if now.version == sOne.version {
		t.Fatal("the edit did not change the version")
	}
	if status, _ := beginStepUp(t, c, one.ID, sOne); status != http.StatusConflict {
		t.Fatalf("beginning a step-up from the old page: %d, want 409", status)
	}
	if status, r := finishStepUp(t, c, one.ID, now, k, opts, origin); status != http.StatusConflict && status != http.StatusUnprocessableEntity {
		t.Fatalf("an answer made for the version before the edit: %d %+v, want refused", status, r)
	}
	if got := len(b.StepUps(t, one.ID)) + len(b.StepUps(t, two.ID)); got != 0 {
		t.Fatalf("%d approval(s) were kept with a step-up made for something else", got)
	}
	_, opts = beginStepUp(t, c, one.ID, now)
	if status, r := finishStepUp(t, c, one.ID, now, k, opts, origin); status != http.StatusOK {
		t.Fatalf("the edited card from its page now: %d %+v", status, r)
	}
}

// productOf is the product a description card changes.
func productOf(t *testing.T, inv controlplane.Invocation) string {
	t.Helper()
	var args struct {
		ProductID string `json:"product_id"`
	}
	if err := json.Unmarshal(inv.Args.Proposed, &args); err != nil {
		t.Fatal(err)
	}
	return args.ProductID
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }

func hexOf(b []byte) string { return hex.EncodeToString(b) }

// approveWithPasskey approves card id with a passkey as c's person, in
// c's session: on b's console served with passkeys, it adds a passkey
// (the person's password again) and answers the card's step-up.
func approveWithPasskey(t *testing.T, b *webtest.Stack, c *webtest.Client, id string) {
	t.Helper()
	pk, origin := passkeyConsole(t, b)
	pc := pk.Client(t)
	at, _ := url.Parse(pk.Server.URL)
	ck := c.SessionCookie()
	pc.HTTP.Jar.SetCookies(at, []*http.Cookie{{Name: ck.Name, Value: ck.Value, Path: "/"}})
	k, status, r := addPasskey(t, pc, b.Users[accounts.Agent], "Laptop", origin)
	if status != http.StatusOK {
		t.Fatalf("adding the passkey: %d %+v", status, r)
	}
	s := stepUpPage(t, pc, id)
	status, opts := beginStepUp(t, pc, id, s)
	if status != http.StatusOK {
		t.Fatalf("begin: %d %s", status, opts)
	}
	if status, r := finishStepUp(t, pc, id, s, k, opts, origin); status != http.StatusOK {
		t.Fatalf("the step-up: %d %+v", status, r)
	}
}
