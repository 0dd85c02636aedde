package console_test

import (
	"context"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/stepup/stepuptest"
	"countersign/web/kit"
	"countersign/web/webtest"
)

// TestTheTimelineSaysAnApprovalWasMadeWithAPasskey: an approval made
// with a step-up reads "approved it with a passkey" on the task's
// timeline, beside how the person signed in; one without does not.
func TestTheTimelineSaysAnApprovalWasMadeWithAPasskey(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	ctx := context.Background()
	plain := f.Describe(t, "Now in elm.")
	u := b.Users[accounts.Agent]
	c := b.Client(t)
	c.MustSignIn(u)
	rewriteSession(t, b, u.ID, map[string]any{kit.KeyIdentifiedBy: "password+passkey"}, nil)
	post(t, c, "/queue/"+plain.ID+"/approve", webtest.CardForm(t, c.Get("/queue/"+plain.ID), "approve-form"))

	if _, err := b.Store.Pool().Exec(ctx, `UPDATE policies SET step_up_every = true WHERE action = $1`, plain.Action); err != nil {
		t.Fatal(err)
	}
	stepped := f.Describe(t, "Now in ash.")
	key := stepuptest.Register(t, b.Store, b.Accounts, u.User)
	actor := controlplane.UserActor(u.ID, string(u.Role), u.Name).IdentifiedAs(controlplane.Identification{Method: "password+passkey"})
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: actor, InvocationID: stepped.ID, Verb: controlplane.StaffApprove,
		Version: stepped.Version, ArgsHash: stepped.ArgsHash, StepUp: key.Assert(t, stepped.ID, int64(stepped.Version), stepped.ArgsHash)}); err != nil {
		t.Fatal(err)
	}

	rows := c.Get("/tasks/" + f.Task.ID).Doc(t).Find(`[data-testid="event"][data-event="invocation.approved"]`)
	if rows.Length() != 2 {
		t.Fatalf("%d approval rows on the timeline, want 2", rows.Length())
	}
	first, second := webtest.Squash(rows.Eq(0).Text()), webtest.Squash(rows.Eq(1).Text())
	if strings.Contains(first, "with a passkey") {
		t.Errorf("an approval without step-up reads %q", first)
	}
	if !strings.Contains(second, "("+"password and passkey) approved it with a passkey.") {
		t.Errorf("the approval with step-up reads %q, want it approved with a passkey", second)
	}
}
