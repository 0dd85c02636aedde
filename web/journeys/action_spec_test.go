package journeys_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"countersign/internal/controlplane"
	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
)

// describedShop connects the demo shop once more under name, described by
// the example file with edit applied to each of its actions.
func describedShop(t *testing.T, b *webtest.Stack, name string, edit func(action map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile("../../internal/httpadapter/testdata/shop-http.json")
	if err != nil {
		t.Fatal(err)
	}
	var desc map[string]any
	if err := json.Unmarshal(raw, &desc); err != nil {
		t.Fatal(err)
	}
	desc["name"] = name
	for _, a := range desc["actions"].([]any) {
		edit(a.(map[string]any))
	}
	raw, _ = json.Marshal(desc)
	sys, err := httpadapter.Load(name+".json", raw, httpadapter.Config{Ledger: adapter.NewLedger(b.Store, b.Clock.Now), Now: b.Clock.Now,
		HTTPClient: &http.Client{Timeout: 10 * time.Second},
		Getenv: func(v string) string {
			switch v {
			case "SHOP_URL":
				return b.ShopURL
			case "SHOP_TOKEN":
				return b.Shop.Token()
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	b.Web.Registry().Connect(sys)
}

// TestDescribedActionsSayWhatTheirFileSays: an action described by a file
// starts at the stage, is rejected with the reasons and is called done in
// the words its file gives; one whose file gives none gets the generic
// ones, never those of the built-in shop's action of the same name.
func TestDescribedActionsSayWhatTheirFileSays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := webtest.New(t, webtest.WithShop())
	const ownReason, ownDone = "Our records show this order was refunded in the store.", "Your money is on its way back"
	describedShop(t, b, "shop-own", func(a map[string]any) {
		if a["name"] == "issue_refund" {
			a["done_words"], a["reject_reasons"] = ownDone, []string{ownReason}
		}
	})
	describedShop(t, b, "shop-plain", func(a map[string]any) {
		delete(a, "default_stage")
		delete(a, "done_words")
		delete(a, "reject_reasons")
	})
	owner := b.Users[accounts.Manager].ID
	if err := b.Control.EnsurePolicies(ctx, &owner); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		system string
		want   int16
	}{{"shop", 5}, {"shop-own", 5}, {"shop-plain", 3}} {
		p, err := b.Control.Policy(ctx, tc.system, "resend_receipt")
		if err != nil {
			t.Fatal(err)
		}
		if int16(p.Stage) != tc.want {
			t.Errorf("%s/resend_receipt starts at stage %d, want %d", tc.system, p.Stage, tc.want)
		}
	}

	b.Assistant, b.Key = b.NewAssistant(t, "spec-bot")
	b.Task = b.NewTask(t, b.Key, "conv-spec", []string{"shop-own/issue_refund", "shop-plain/issue_refund"})
	// The two files describe one shop whose orders declare their number as
	// the business key: the same refund of the same order through the
	// second would be the first request again (a duplicate), so each asks
	// for its own amount.
	propose := func(system string, cents int) string {
		res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations", map[string]any{"system": system,
			"action": "issue_refund", "args": webtest.RefundArgs("walnut lamp", cents), "summary": "Refund the damaged lamp"}).Want(t, http.StatusCreated)
		if res.JSON["state"] != "awaiting_approval" {
			t.Fatalf("%s: proposal is %s, want awaiting approval", system, res.JSON["state"])
		}
		return res.JSON["id"].(string)
	}
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	presets := func(id string) []string {
		var out []string
		c.Get("/queue/" + id).Doc(t).Find(`[data-testid="reject-form"] input[type="radio"][name="reason"]`).Each(func(_ int, s *goquery.Selection) {
			v, _ := s.Attr("value")
			out = append(out, v)
		})
		return out
	}
	// Each refund is proposed after the one before is done: a refund
	// changes the order, so a quote made before it would no longer hold.
	agent := b.Users[accounts.Agent]
	decide := func(id string) {
		if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: agent.Actor(), InvocationID: id, Verb: controlplane.StaffApprove, Version: b.Invocation(t, id).Version, ArgsHash: b.Invocation(t, id).ArgsHash}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Control.Dispatch(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	shopReason := "The amount is more than this order allows."
	own := propose("shop-own", 700)
	ownPresets := presets(own)
	if !slices.Contains(ownPresets, ownReason) || slices.Contains(ownPresets, shopReason) {
		t.Errorf("shop-own's refund offers %q, want its file's reason and not the shop's", ownPresets)
	}
	decide(own)
	plain := propose("shop-plain", 600)
	if got := presets(plain); slices.Contains(got, shopReason) || len(got) != len(ownPresets)-1 || got[len(got)-1] != "other" {
		t.Errorf("shop-plain's refund offers %q, want only the general reasons and Other", got)
	}
	decide(plain)
	for id, want := range map[string]string{own: ownDone + ". Reference: ", plain: "Done. Reference: "} {
		done := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id, nil).Want(t, http.StatusOK)
		if say, _ := done.JSON["say"].(string); done.JSON["state"] != "completed" || !strings.HasPrefix(say, want) {
			t.Errorf("%s after dispatch: %s, say %q, want it to start %q", id, done.JSON["state"], say, want)
		}
	}
}
