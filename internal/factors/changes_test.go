package factors

import (
	"encoding/json"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/factors/softkey"
	"countersign/store"
)

// pw is a person identified by their password alone.
var pw = controlplane.Identification{Method: controlplane.IdentifiedPassword}

type factorEventRow struct {
	Action, ActorID string
	Data            map[string]any
}

// factorEvents are the factor.* events recorded so far, oldest first.
func factorEvents(t *testing.T, b *bundle) []factorEventRow {
	t.Helper()
	rows, err := b.st.Pool().Query(t.Context(), `SELECT action, actor_id, data FROM events
		WHERE action IN ('factor.added', 'factor.removed', 'factor.reset') ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []factorEventRow
	for rows.Next() {
		var r factorEventRow
		var raw []byte
		if err := rows.Scan(&r.Action, &r.ActorID, &raw); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &r.Data); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestOwnFactorChangesAreAudited: setting up an app, making recovery codes,
// adding and removing a passkey and removing the app each record one
// event by the person, naming the kind, the passkey's name and how the
// person was identified; a wrong confirmation code records nothing.
func TestOwnFactorChangesAreAudited(t *testing.T) {
	b := withPasskeys(t)
	ctx := t.Context()
	app := controlplane.Identification{Method: "password+totp"}
	e, err := b.svc.StartTOTP(ctx, b.agent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.ConfirmTOTP(ctx, b.agent, pw, "000000"); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("a wrong code: %v", err)
	}
	if got := factorEvents(t, b); len(got) != 0 {
		t.Fatalf("a wrong confirmation code recorded %+v", got)
	}
	if _, err := b.svc.ConfirmTOTP(ctx, b.agent, pw, b.code(t, secretOf(e))); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.NewRecoveryCodes(ctx, b.agent, app); err != nil {
		t.Fatal(err)
	}
	b.register(t, b.agent, "Work laptop")
	keys := mustPasskeys(t, b)
	if err := b.svc.RemovePasskey(ctx, b.agent, app, keys[0].FactorID); err != nil {
		t.Fatal(err)
	}
	if err := b.svc.RemoveTOTP(ctx, b.agent, app); err != nil {
		t.Fatal(err)
	}
	want := []struct{ action, kind, name, method string }{
		{"factor.added", "totp", "", "password"},
		{"factor.added", "recovery_codes", "", "password+totp"},
		{"factor.added", "passkey", "Work laptop", "password"},
		{"factor.removed", "passkey", "Work laptop", "password+totp"},
		{"factor.removed", "totp", "", "password+totp"},
	}
	got := factorEvents(t, b)
	if len(got) != len(want) {
		t.Fatalf("%d factor events (%+v), want %d", len(got), got, len(want))
	}
	for i, w := range want {
		g := got[i]
		by, _ := g.Data["identified_by"].(map[string]any)
		name, _ := g.Data["name"].(string)
		if g.Action != w.action || g.Data["kind"] != w.kind || name != w.name || by["method"] != w.method ||
			g.ActorID != itoa(b.agent.ID) || g.Data["user_id"] != float64(b.agent.ID) {
			t.Errorf("event %d: %+v, want %+v by the agent", i, g, w)
		}
	}
}

// TestTOTPRemovedButNotTheLastOfARequiredRole: the app can be removed and
// set up again (a new phone), never as the last factor of a role that
// requires one; removing the last factor forgets the recovery codes.
func TestTOTPRemovedButNotTheLastOfARequiredRole(t *testing.T) {
	b := withPasskeys(t)
	ctx := t.Context()
	if err := b.svc.RemoveTOTP(ctx, b.agent, pw); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("removing an app nobody set up: %v, want NotFound", err)
	}
	b.enrol(t, b.agent)
	if err := b.svc.SetRequired(ctx, b.admin, pw, accounts.Agent, true, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.svc.RemoveTOTP(ctx, b.agent, pw); !apperr.Is(err, apperr.Conflict) {
		t.Fatalf("removing the last factor of a required role: %v, want Conflict", err)
	}
	b.register(t, b.agent, "Phone")
	if err := b.svc.RemoveTOTP(ctx, b.agent, pw); err != nil {
		t.Fatalf("removing the app beside a passkey: %v", err)
	}
	st, _ := b.svc.StatusOf(ctx, b.agent.ID)
	if st.TOTP || st.Passkeys != 1 || st.RecoveryLeft != RecoveryCodes {
		t.Fatalf("after removing the app: %+v, want the passkey and the recovery codes", st)
	}
	b.enrol(t, b.agent) // the new phone
	if err := b.svc.SetRequired(ctx, b.admin, pw, accounts.Agent, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.svc.RemovePasskey(ctx, b.agent, pw, mustPasskeys(t, b)[0].FactorID); err != nil {
		t.Fatal(err)
	}
	if err := b.svc.RemoveTOTP(ctx, b.agent, pw); err != nil {
		t.Fatal(err)
	}
	if st, _ := b.svc.StatusOf(ctx, b.agent.ID); st.Any() || st.RecoveryLeft != 0 {
		t.Fatalf("after removing every factor: %+v, want nothing left", st)
	}
}

// TestFirstPasskeyMakesRecoveryCodes: a person without recovery codes gets
// them with their first passkey, and one signs in in its place; a second
// passkey, or a person with an app's codes, gets none.
func TestFirstPasskeyMakesRecoveryCodes(t *testing.T) {
	b := withPasskeys(t)
	ctx := t.Context()
	add := func(u accounts.User, name string) []string {
		t.Helper()
		c, err := b.svc.BeginPasskeyRegistration(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		_, body, err := softkey.Create(c.Options, rpID, origin)
		if err != nil {
			t.Fatal(err)
		}
		codes, err := b.svc.FinishPasskeyRegistration(ctx, u, pw, c.ID, name, body)
		if err != nil {
			t.Fatal(err)
		}
		return codes
	}
	codes := add(b.agent, "Phone")
	if len(codes) != RecoveryCodes {
		t.Fatalf("the first passkey came with %d recovery codes, want %d", len(codes), RecoveryCodes)
	}
	if kind, err := b.svc.Verify(ctx, b.agent, codes[3], "192.0.2.1"); err != nil || kind != "recovery" {
		t.Fatalf("a recovery code of a passkey-only person: %q, %v", kind, err)
	}
	if again := add(b.agent, "Laptop"); again != nil {
		t.Fatalf("a second passkey made recovery codes again: %v", again)
	}
	b.enrol(t, b.admin)
	if got := add(b.admin, "Key"); got != nil {
		t.Fatalf("a person with an app's recovery codes got new ones: %v", got)
	}
}

// TestResetFactorsByAnAdmin: an admin removes every factor of a person who
// lost them, which ends the person's sessions and is audited by the admin;
// the person's next sign-in of a role that requires a factor sets one up.
func TestResetFactorsByAnAdmin(t *testing.T) {
	b := withPasskeys(t)
	ctx := t.Context()
	b.enrol(t, b.agent)
	b.register(t, b.agent, "Phone")
	if err := b.svc.SetRequired(ctx, b.admin, pw, accounts.Agent, true, nil); err != nil {
		t.Fatal(err)
	}
	// Requiring a factor ended the agent's sessions; this one came after.
	if err := b.st.CreateSession(ctx, store.Session{IDHash: []byte("agent-session"), UserID: &b.agent.ID, CSRFToken: "x", Data: []byte{},
		CreatedAt: b.clock.Now(), LastSeenAt: b.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := b.svc.ResetFactors(ctx, b.agent, pw, b.admin); !apperr.Is(err, apperr.Forbidden) {
		t.Fatalf("an agent resetting an admin: %v, want Forbidden", err)
	}
	if err := b.svc.ResetFactors(ctx, b.admin, pw, b.admin); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("an admin resetting their own: %v, want Invalid", err)
	}
	if err := b.svc.ResetFactors(ctx, b.admin, controlplane.Identification{Method: "oidc", Issuer: "https://idp.test", Subject: "ida"}, b.agent); err != nil {
		t.Fatal(err)
	}
	if st, _ := b.svc.StatusOf(ctx, b.agent.ID); st.Any() || st.RecoveryLeft != 0 {
		t.Fatalf("after the reset: %+v", st)
	}
	var live int
	if err := b.st.Pool().QueryRow(ctx, `SELECT count(*) FROM sessions WHERE user_id = $1 AND revoked_at IS NULL`, b.agent.ID).Scan(&live); err != nil || live != 0 {
		t.Fatalf("%d live sessions of the person after the reset (%v)", live, err)
	}
	if step, err := b.svc.StepAfterPassword(ctx, b.agent); err != nil || step != EnrolStep {
		t.Fatalf("the next sign-in: %v %v, want the enrolment", step, err)
	}
	got := factorEvents(t, b)
	last := got[len(got)-1]
	by, _ := last.Data["identified_by"].(map[string]any)
	if last.Action != "factor.reset" || last.ActorID != itoa(b.admin.ID) || last.Data["user_id"] != float64(b.agent.ID) ||
		last.Data["user_name"] != b.agent.Name || by["method"] != "oidc" || by["subject"] != "ida" {
		t.Fatalf("the reset's event: %+v", last)
	}
	if err := b.svc.ResetFactors(ctx, b.admin, pw, b.agent); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("resetting a person without factors: %v, want NotFound", err)
	}
}

func secretOf(e Enrolment) string {
	out := make([]rune, 0, len(e.Secret))
	for _, r := range e.Secret {
		if r != ' ' {
			out = append(out, r)
		}
	}
	return string(out)
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
