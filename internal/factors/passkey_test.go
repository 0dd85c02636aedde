package factors

import (
	"context"
	"errors"
	"sync"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/factors/softkey"
	"countersign/internal/racetest"
	"countersign/store"
)

const (
	rpID   = "console.example.test"
	origin = "https://console.example.test"
)

// withPasskeys is setup with the relying party of https://console.example.test.
func withPasskeys(t *testing.T) *bundle {
	t.Helper()
	b := setup(t)
	svc, err := New(b.st, b.acc, Config{Key: testKey, Now: b.clock.Now, PublicURL: origin + "/"})
	if err != nil {
		t.Fatal(err)
	}
	b.svc = svc
	return b
}

// register adds a passkey named name to u through the service.
func (b *bundle) register(t *testing.T, u accounts.User, name string) *softkey.Key {
	t.Helper()
	c, err := b.svc.BeginPasskeyRegistration(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	k, body, err := softkey.Create(c.Options, rpID, origin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.FinishPasskeyRegistration(t.Context(), u, pw, c.ID, name, body); err != nil {
		t.Fatal(err)
	}
	return k
}

// signIn answers a new sign-in ceremony of u with k at originOf.
func (b *bundle) signIn(t *testing.T, u accounts.User, k *softkey.Key, originOf string) error {
	t.Helper()
	c, err := b.svc.BeginPasskeySignIn(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	body, err := k.Get(c.Options, rpID, originOf)
	if err != nil {
		t.Fatal(err)
	}
	return b.svc.FinishPasskeySignIn(t.Context(), u, c.ID, body, "192.0.2.1")
}

func TestPasskeyRegisterAndSignIn(t *testing.T) {
	b := withPasskeys(t)
	ctx := t.Context()
	k := b.register(t, b.agent, "Work laptop")
	keys, err := b.svc.Passkeys(ctx, b.agent.ID)
	if err != nil || len(keys) != 1 || keys[0].Name != "Work laptop" || len(keys[0].PublicKey) == 0 {
		t.Fatalf("passkeys %+v, %v", keys, err)
	}
	if st, _ := b.svc.StatusOf(ctx, b.agent.ID); !st.Any() || st.Passkeys != 1 {
		t.Fatalf("status %+v: a passkey does not count as a factor", st)
	}
	if step, _ := b.svc.StepAfterPassword(ctx, b.agent); step != VerifyStep {
		t.Fatalf("step after the password %v, want VerifyStep", step)
	}
	if err := b.signIn(t, b.agent, k, origin); err != nil {
		t.Fatalf("sign-in with the passkey: %v", err)
	}
	if keys, _ := b.svc.Passkeys(ctx, b.agent.ID); keys[0].LastUsedAt == nil || keys[0].SignCount != 1 {
		t.Fatalf("after use %+v", keys[0])
	}
	if _, err := b.svc.BeginPasskeySignIn(ctx, b.admin); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("a passkey sign-in of a person with none: %v, want NotFound", err)
	}
}

// TestPasskeyCeremonyIsSingleUseAndShortLived: an answer to a ceremony
// works once, only for the person and purpose it was begun for, and not
// after five minutes.
func TestPasskeyCeremonyIsSingleUseAndShortLived(t *testing.T) {
	b := withPasskeys(t)
	ctx := t.Context()
	k := b.register(t, b.agent, "Phone")
	c, err := b.svc.BeginPasskeySignIn(ctx, b.agent)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := k.Get(c.Options, rpID, origin)
	if err := b.svc.FinishPasskeySignIn(ctx, b.agent, c.ID, body, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	k.Count += 5
	again, _ := k.Get(c.Options, rpID, origin)
	if err := b.svc.FinishPasskeySignIn(ctx, b.agent, c.ID, again, "192.0.2.1"); !errors.Is(err, ErrPasskeyRefused) {
		t.Fatalf("a ceremony answered twice: %v, want ErrPasskeyRefused", err)
	}
	c, _ = b.svc.BeginPasskeySignIn(ctx, b.agent)
	body, _ = k.Get(c.Options, rpID, origin)
	b.clock.Advance(CeremonyLife)
	if err := b.svc.FinishPasskeySignIn(ctx, b.agent, c.ID, body, "192.0.2.1"); !errors.Is(err, ErrPasskeyRefused) {
		t.Fatalf("an expired ceremony: %v, want ErrPasskeyRefused", err)
	}
	reg, _ := b.svc.BeginPasskeyRegistration(ctx, b.agent)
	body, _ = k.Get(reg.Options, rpID, origin)
	if err := b.svc.FinishPasskeySignIn(ctx, b.agent, reg.ID, body, "192.0.2.1"); !errors.Is(err, ErrPasskeyRefused) {
		t.Fatalf("a registration ceremony answered as a sign-in: %v, want ErrPasskeyRefused", err)
	}
}

// TestPasskeyFromAnotherOriginRefused: the client data must name the
// console's own origin, at registration and at sign-in.
func TestPasskeyFromAnotherOriginRefused(t *testing.T) {
	b := withPasskeys(t)
	ctx := t.Context()
	c, _ := b.svc.BeginPasskeyRegistration(ctx, b.agent)
	_, body, _ := softkey.Create(c.Options, rpID, "https://console.example.test.evil.example")
	if _, err := b.svc.FinishPasskeyRegistration(ctx, b.agent, pw, c.ID, "Phone", body); !errors.Is(err, ErrPasskeyRefused) {
		t.Fatalf("a registration made at another origin: %v, want ErrPasskeyRefused", err)
	}
	k := b.register(t, b.agent, "Phone")
	for _, other := range []string{"https://evil.example", "http://console.example.test", "https://console.example.test:8443"} {
		if err := b.signIn(t, b.agent, k, other); !errors.Is(err, ErrPasskeyRefused) {
			t.Errorf("an assertion made at %s: %v, want ErrPasskeyRefused", other, err)
		}
	}
	if err := b.signIn(t, b.agent, k, origin); err != nil {
		t.Fatalf("the console's own origin after the refusals: %v", err)
	}
}

// TestPasskeySignCountRegressionRefused: an assertion whose signature
// counter is not above the last one seen is refused (a cloned key).
func TestPasskeySignCountRegressionRefused(t *testing.T) {
	b := withPasskeys(t)
	k := b.register(t, b.agent, "Key")
	k.Count = 7
	if err := b.signIn(t, b.agent, k, origin); err != nil {
		t.Fatal(err)
	}
	for _, count := range []uint32{7, 3} {
		k.Count = count
		if err := b.signIn(t, b.agent, k, origin); !errors.Is(err, ErrPasskeyRefused) {
			t.Errorf("counter %d after 7: %v, want ErrPasskeyRefused", count, err)
		}
	}
	k.Count = 8
	if err := b.signIn(t, b.agent, k, origin); err != nil {
		t.Fatalf("counter 8 after 7: %v", err)
	}
}

// TestPasskeyOneCountRacedTwiceOneWins: two assertions carrying the same
// counter (a cloned key used twice at once), both verified against the
// stored count, are held after the signature check until both arrived;
// the UPDATE that records the count lets exactly one through.
func TestPasskeyOneCountRacedTwiceOneWins(t *testing.T) {
	b := withPasskeys(t)
	k := b.register(t, b.agent, "Key")
	for round := range 3 {
		bodies := make([][]byte, 2)
		ids := make([]string, 2)
		count := k.Count
		for i := range 2 {
			c, err := b.svc.BeginPasskeySignIn(t.Context(), b.agent)
			if err != nil {
				t.Fatal(err)
			}
			k.Count = count
			ids[i] = c.ID
			if bodies[i], err = k.Get(c.Options, rpID, origin); err != nil {
				t.Fatal(err)
			}
		}
		var arrived sync.WaitGroup
		arrived.Add(2)
		b.svc.beforeUse = func() { arrived.Done(); arrived.Wait() }
		errs := racetest.Run(2, func(i int) error {
			return b.svc.FinishPasskeySignIn(context.Background(), b.agent, ids[i], bodies[i], "192.0.2.1")
		})
		b.svc.beforeUse = nil
		ok, refused := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, ErrPasskeyRefused):
				refused++
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if ok != 1 || refused != 1 {
			t.Fatalf("round %d: %d accepted and %d refused, want 1 and 1", round, ok, refused)
		}
	}
}

// TestPasskeyRemovedButNotTheLastOfARequiredRole: a passkey can be
// removed, not another person's, and not the last factor of a person
// whose role requires one.
func TestPasskeyRemovedButNotTheLastOfARequiredRole(t *testing.T) {
	b := withPasskeys(t)
	ctx := t.Context()
	b.register(t, b.agent, "Old phone")
	b.register(t, b.agent, "New phone")
	keys, _ := b.svc.Passkeys(ctx, b.agent.ID)
	if err := b.svc.RemovePasskey(ctx, b.admin, pw, keys[0].FactorID); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("another person's passkey removed: %v, want NotFound", err)
	}
	if err := b.svc.SetRequired(ctx, b.admin, controlplane.Identification{Method: controlplane.IdentifiedPassword}, accounts.Agent, true, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.svc.RemovePasskey(ctx, b.agent, pw, keys[0].FactorID); err != nil {
		t.Fatalf("remove one of two: %v", err)
	}
	if err := b.svc.RemovePasskey(ctx, b.agent, pw, keys[1].FactorID); !apperr.Is(err, apperr.Conflict) {
		t.Fatalf("remove the last factor of a required role: %v, want Conflict", err)
	}
	if err := b.svc.SetRequired(ctx, b.admin, controlplane.Identification{Method: controlplane.IdentifiedPassword}, accounts.Agent, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.svc.RemovePasskey(ctx, b.agent, pw, keys[1].FactorID); err != nil {
		t.Fatalf("remove the last when not required: %v", err)
	}
	if st, _ := b.svc.StatusOf(ctx, b.agent.ID); st.Any() {
		t.Fatalf("status after removing every passkey: %+v", st)
	}
}

// TestPasskeyTwoRemovalsRacedKeepOne: a person of a required role
// removing both their passkeys at once keeps one (their factor rows are
// locked before the count).
func TestPasskeyTwoRemovalsRacedKeepOne(t *testing.T) {
	b := withPasskeys(t)
	ctx := t.Context()
	if err := b.svc.SetRequired(ctx, b.admin, controlplane.Identification{Method: controlplane.IdentifiedPassword}, accounts.Agent, true, nil); err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		for len(mustPasskeys(t, b)) < 2 {
			b.register(t, b.agent, "Key")
		}
		keys := mustPasskeys(t, b)
		errs := racetest.Run(2, func(i int) error {
			return b.svc.RemovePasskey(context.Background(), b.agent, pw, keys[i].FactorID)
		})
		if left := len(mustPasskeys(t, b)); left != 1 {
			t.Fatalf("round %d: %d passkeys left (%v), want 1", round, left, errs)
		}
	}
}

func mustPasskeys(t *testing.T, b *bundle) []store.Passkey {
	t.Helper()
	keys, err := b.svc.Passkeys(t.Context(), b.agent.ID)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestPasskeyNameIsRequired(t *testing.T) {
	b := withPasskeys(t)
	c, _ := b.svc.BeginPasskeyRegistration(t.Context(), b.agent)
	_, body, _ := softkey.Create(c.Options, rpID, origin)
	if _, err := b.svc.FinishPasskeyRegistration(t.Context(), b.agent, pw, c.ID, "  ", body); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("no name: %v, want Invalid", err)
	}
}

func TestRelyingPartyFromThePublicURL(t *testing.T) {
	id, o, err := RelyingParty("https://Console.Example.com:8443/base/")
	if err != nil || id != "console.example.com" || o != "https://console.example.com:8443" {
		t.Fatalf("RelyingParty = %q, %q, %v", id, o, err)
	}
	for _, bad := range []string{"http://127.0.0.1:8080", "http://[::1]:8080", "console.example.com", "ftp://x.example"} {
		if _, _, err := RelyingParty(bad); err == nil {
			t.Errorf("RelyingParty(%q) accepted", bad)
		}
	}
	b := setup(t)
	if b.svc.PasskeysOn() {
		t.Fatal("passkeys on without a public URL")
	}
	if _, err := b.svc.BeginPasskeyRegistration(context.Background(), b.agent); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("a registration with passkeys off: %v", err)
	}
}
