package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/web/webtest"
)

// TestPolicyPageSetsStepUp: a manager asks for a fresh passkey on every
// approval and above an amount on the policy form; a wrong amount, or an
// amount for an action that moves none, is a field error (422, in the
// summary, nothing changed); the change shows on the list and in the
// policy-change event, before and after. An agent cannot change it.
func TestPolicyPageSetsStepUp(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	ctx := context.Background()
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	path := "/policies/shop/issue_refund"
	form := c.Get(path).Doc(t)
	if form.Find(`[data-testid="policy-step-up"] input#step_up_every[type="checkbox"]:not([checked])`).Length() != 1 ||
		form.Find(`[data-testid="policy-step-up"] input#step_up_above`).AttrOr("value", "x") != "" {
		t.Fatal("a fresh policy's form does not offer step-up, off")
	}
	for _, s := range []struct{ path, above, want string }{
		{path, "-5", "use an amount in USD"},
		{path, "lots", "use an amount in USD"},
		{"/policies/shop/cancel_subscription", "10", "this action moves no amount"},
	} {
		v := webtest.PolicyForm(b, c.CSRF(s.path), "1", "3", "Passkeys for refunds.", "save")
		v["step_up_above"] = []string{s.above}
		res := c.Post(s.path, v)
		doc := res.Doc(t)
		if got := doc.Find(`[data-testid="step_up_above-error"]`).Text(); res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(got, s.want) {
			t.Fatalf("%s above %q: %d %q, want 422 %q", s.path, s.above, res.StatusCode, got, s.want)
		}
		if ids := webtest.ErrorSummary(t, doc); strings.Join(ids, " ") != "step_up_above" {
			t.Errorf("the summary links to %v, want [step_up_above]", ids)
		}
	}
	if p, _ := b.Control.Policy(ctx, "shop", "issue_refund"); p.Version != 1 || p.StepUpEvery || p.StepUpAboveCents != nil {
		t.Fatalf("refused saves changed the policy: %+v", p)
	}

	v := webtest.PolicyForm(b, c.CSRF(path), "1", "3", "Passkeys for refunds.", "save")
	v["step_up_every"], v["step_up_above"] = []string{"on"}, []string{"100"}
	if res := c.Post(path, v); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("saving step-up: %d\n%s", res.StatusCode, res.Text)
	}
	p, err := b.Control.Policy(ctx, "shop", "issue_refund")
	if err != nil || !p.StepUpEvery || p.StepUpAboveCents == nil || *p.StepUpAboveCents != 10000 {
		t.Fatalf("the policy after saving: %+v, %v", p, err)
	}
	if row := c.Get("/policies").Doc(t).Find(`[data-testid="policy-shop-issue_refund"]`).Text(); !strings.Contains(row, "a fresh passkey for every approval") {
		t.Errorf("the list row says %q", webtest.Squash(row))
	}
	if f := c.Get(path).Doc(t); f.Find(`input#step_up_every[checked]`).Length() != 1 || f.Find(`input#step_up_above`).AttrOr("value", "") != "100.00" {
		t.Error("the form does not show the saved step-up")
	}
	var before, after string
	err = b.Store.Pool().QueryRow(ctx, `SELECT (data->'before'->>'step_up_every') || ' ' || coalesce(data->'before'->>'step_up_above_cents', 'none'),
		(data->'after'->>'step_up_every') || ' ' || (data->'after'->>'step_up_above_cents') FROM events WHERE action = 'policy.changed'`).Scan(&before, &after)
	if err != nil || before != "false none" || after != "true 10000" {
		t.Errorf("the audit's step-up: before %q after %q (%v)", before, after, err)
	}

	agent := b.Client(t)
	agent.MustSignIn(b.Users[accounts.Agent])
	off := webtest.PolicyForm(b, agent.CSRF("/"), "2", "3", "No passkeys.", "save")
	if res := agent.Post(path, off); res.StatusCode != http.StatusForbidden {
		t.Fatalf("an agent changing the policy: %d, want 403", res.StatusCode)
	}
	if p, _ := b.Control.Policy(ctx, "shop", "issue_refund"); !p.StepUpEvery {
		t.Fatal("an agent turned step-up off")
	}
}
