package sso_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/internal/sso"
	"countersign/internal/sso/ssotest"
)

// confirm starts a confirmation from browser-1 and logs username in at
// the provider; it returns the provider's URL it was sent to and the
// state and code the provider sent back.
func (b *bundle) confirm(t *testing.T, username string) (authURL *url.URL, state, code string) {
	t.Helper()
	to, err := b.p.BeginConfirm(t.Context(), "browser-1", "/account/factors")
	if err != nil {
		t.Fatal(err)
	}
	authURL, _ = url.Parse(to)
	back := ssotest.Login(t, b.op, to, username)
	return authURL, back.Query().Get("state"), back.Query().Get("code")
}

// TestSignInRecordsWhenThePersonAuthenticated: a sign-in says when the
// person signed in at the provider (the ID token's auth_time), and a
// sign-in within FreshFor counts as fresh, one older does not.
func TestSignInRecordsWhenThePersonAuthenticated(t *testing.T) {
	b := setup(t)
	before := time.Now().Add(-time.Second)
	got, err := b.signIn(t, "sam")
	if err != nil {
		t.Fatal(err)
	}
	if got.AuthAt.Before(before) || got.AuthAt.After(time.Now().Add(time.Second)) || got.Confirmed {
		t.Fatalf("AuthAt %v (confirmed %v), want the provider's sign-in just now", got.AuthAt, got.Confirmed)
	}
	if !sso.Fresh(got.AuthAt, time.Now()) || sso.Fresh(got.AuthAt, time.Now().Add(sso.FreshFor+time.Second)) {
		t.Errorf("Fresh of a sign-in now: true now and false after %v, wanted", sso.FreshFor)
	}
	// A token without auth_time may come from the provider's own session,
	// nobody there: it is never fresh.
	b.op.SetAuthAge(-1)
	got, err = b.signIn(t, "sam")
	if err != nil {
		t.Fatal(err)
	}
	if !got.AuthAt.IsZero() || sso.Fresh(got.AuthAt, time.Now()) {
		t.Errorf("a sign-in whose token has no auth_time: AuthAt %v, want none and not fresh", got.AuthAt)
	}
}

// TestConfirmSignsTheSamePersonInAgain: a confirmation asks the provider
// for a new sign-in (prompt=login, max_age=0) and, from the person signed
// in, is a fresh sign-in of the same account.
func TestConfirmSignsTheSamePersonInAgain(t *testing.T) {
	b := setup(t)
	first, err := b.signIn(t, "sam")
	if err != nil {
		t.Fatal(err)
	}
	authURL, state, code := b.confirm(t, "sam")
	if q := authURL.Query(); q.Get("prompt") != "login" || q.Get("max_age") != "0" || q.Get("code_challenge") == "" || q.Get("nonce") == "" {
		t.Fatalf("the confirmation's authorization URL %s, want prompt=login, max_age=0 and the PKCE challenge and nonce", authURL)
	}
	got, err := b.p.Finish(t.Context(), "browser-1", state, code, sso.Person{Issuer: b.op.URL, Subject: "sub-sam"})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Confirmed || got.User.ID != first.User.ID || got.Next != "/account/factors" || !sso.Fresh(got.AuthAt, time.Now()) {
		t.Fatalf("confirmation: %+v, want sam's account confirmed just now, back to the account page", got)
	}
	// The state of a confirmation is bound to the browser like a sign-in's.
	_, state, code = b.confirm(t, "sam")
	_, err = b.p.Finish(t.Context(), "browser-2", state, code, sso.Person{Issuer: b.op.URL, Subject: "sub-sam"})
	wantRefused(t, err, "sso_state_other_browser")
}

// TestConfirmByAnotherPersonIsRefused: a confirmation signed in at the
// provider by someone else than the session's person is refused, and
// makes no account for them.
func TestConfirmByAnotherPersonIsRefused(t *testing.T) {
	b := setup(t)
	if _, err := b.signIn(t, "sam"); err != nil {
		t.Fatal(err)
	}
	_, state, code := b.confirm(t, "lee")
	_, err := b.p.Finish(t.Context(), "browser-1", state, code, sso.Person{Issuer: b.op.URL, Subject: "sub-sam"})
	wantRefused(t, err, "sso_confirm_other_person")
	if managed, err := b.p.ManagedAccounts(t.Context()); err != nil || len(managed) != 1 {
		t.Fatalf("accounts the provider manages after lee's confirmation: %v %v, want sam's alone", managed, err)
	}
	// Nor does a session without a provider's person take one.
	_, state, code = b.confirm(t, "sam")
	_, err = b.p.Finish(t.Context(), "browser-1", state, code, sso.Person{})
	wantRefused(t, err, "sso_confirm_other_person")
}

// TestConfirmWithAnOldAuthTimeIsRefused: a confirmation whose ID token
// says the person authenticated longer ago than FreshFor (a provider that
// answered from its session despite max_age) is refused; a plain sign-in
// with the same auth_time is not, but it does not count as fresh.
func TestConfirmWithAnOldAuthTimeIsRefused(t *testing.T) {
	b := setup(t)
	if _, err := b.signIn(t, "sam"); err != nil {
		t.Fatal(err)
	}
	sam := sso.Person{Issuer: b.op.URL, Subject: "sub-sam"}
	_, state, code := b.confirm(t, "sam")
	b.shift.Store(int64((sso.FreshFor + time.Second) / time.Second))
	_, err := b.p.Finish(t.Context(), "browser-1", state, code, sam)
	wantRefused(t, err, "sso_confirm_not_fresh")

	b.shift.Store(0)
	state, code = b.begin(t, b.p, "browser-1", "sam")
	b.shift.Store(int64((sso.FreshFor + time.Second) / time.Second))
	got, err := b.p.Finish(t.Context(), "browser-1", state, code, sam)
	if err != nil {
		t.Fatalf("a plain sign-in with the same auth_time: %v", err)
	}
	if sso.Fresh(got.AuthAt, b.now()) || !strings.HasPrefix(got.Next, "/queue") {
		t.Errorf("a sign-in at %v counts as fresh at %v", got.AuthAt, b.now())
	}
}
