package sso_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/sso"
	"countersign/internal/sso/ssotest"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const (
	clientID    = "countersign-console"
	secret      = "console-secret"
	redirectURL = "http://console.test/sign-in/sso/callback"
)

var groupRoles = map[string]accounts.Role{"support": accounts.Agent, "leads": accounts.Manager, "it": accounts.Admin}

type bundle struct {
	op    *ssotest.OP
	p     *sso.Provider
	st    *store.Store
	shift atomic.Int64 // added to the real clock, in seconds
}

// setup starts a provider with sam (support), lee (support and leads) and
// ida (it), and the console's client of it over a fresh database.
func setup(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{op: ssotest.Start(t), st: store.New(dbtest.New(t))}
	b.op.AddClient(ssotest.Client{ID: clientID, Secret: secret, RedirectURL: redirectURL})
	b.op.AddUser("sam", "sam@example.test", "Sam Support", "support")
	b.op.AddUser("lee", "lee@example.test", "Lee Lead", "support", "leads")
	b.op.AddUser("ida", "ida@example.test", "Ida Admin", "it", "unmapped")
	b.p = b.provider(t, clientID)
	return b
}

func (b *bundle) now() time.Time { return time.Now().Add(time.Duration(b.shift.Load()) * time.Second) }

func (b *bundle) provider(t *testing.T, id string) *sso.Provider {
	t.Helper()
	p, err := sso.New(t.Context(), sso.Config{Issuer: b.op.URL, ClientID: id, ClientSecret: secret, RedirectURL: redirectURL,
		Scopes: []string{"email", "profile"}, GroupRoles: groupRoles}, b.st, nil, b.now)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// begin starts a sign-in from browser and logs username in at the
// provider; it returns the state and code the provider sent back.
func (b *bundle) begin(t *testing.T, p *sso.Provider, browser, username string) (state, code string) {
	t.Helper()
	authURL, err := p.Begin(t.Context(), browser, "/queue")
	if err != nil {
		t.Fatal(err)
	}
	back := ssotest.Login(t, b.op, authURL, username)
	if !strings.HasPrefix(back.String(), redirectURL+"?") {
		t.Fatalf("provider sent the browser to %s, want the callback", back)
	}
	return back.Query().Get("state"), back.Query().Get("code")
}

func (b *bundle) signIn(t *testing.T, username string) (sso.SignedIn, error) {
	t.Helper()
	state, code := b.begin(t, b.p, "browser-1", username)
	return b.p.Finish(t.Context(), "browser-1", state, code, sso.Person{})
}

func wantRefused(t *testing.T, err error, code string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Code != code {
		t.Fatalf("got %v, want the refusal %s", err, code)
	}
	if e.Message == "" || e.Hint == "" || (e.Kind != apperr.Unauthenticated && e.Kind != apperr.Forbidden) {
		t.Errorf("refusal %s: kind %s, message %q, hint %q; want 401/403 words saying what to do", code, e.Kind, e.Message, e.Hint)
	}
}

func TestRoleIsTheHighestMappedGroup(t *testing.T) {
	b := setup(t)
	for _, tc := range []struct {
		user string
		role accounts.Role
	}{{"sam", accounts.Agent}, {"lee", accounts.Manager}, {"ida", accounts.Admin}} {
		got, err := b.signIn(t, tc.user)
		if err != nil {
			t.Fatalf("%s: %v", tc.user, err)
		}
		if got.User.Role != tc.role || !got.Created || got.Next != "/queue" || got.User.Email != tc.user+"@example.test" {
			t.Errorf("%s: %+v, want a new %s account going to /queue", tc.user, got, tc.role)
		}
		if d := time.Until(got.Expiry); d < 50*time.Minute || d > time.Hour+time.Minute {
			t.Errorf("%s: expiry in %v, want the ID token's (an hour)", tc.user, d)
		}
	}
	again, err := b.signIn(t, "sam")
	if err != nil {
		t.Fatal(err)
	}
	if again.Created || again.User.Role != accounts.Agent {
		t.Errorf("second sign-in: %+v, want the same account, not a new one", again)
	}
}

func TestGroupsDecideTheRoleAtEverySignIn(t *testing.T) {
	b := setup(t)
	first, err := b.signIn(t, "lee")
	if err != nil || first.User.Role != accounts.Manager {
		t.Fatalf("lee: %+v %v, want manager", first, err)
	}
	b.op.SetGroups("lee", "support")
	demoted, err := b.signIn(t, "lee")
	if err != nil || demoted.User.Role != accounts.Agent || demoted.User.ID != first.User.ID {
		t.Fatalf("lee out of leads: %+v %v, want the same account as an agent", demoted, err)
	}
	// A session lee still has ends when the provider no longer lets them in.
	ctx := t.Context()
	uid := first.User.ID
	if err := b.st.CreateSession(ctx, store.Session{IDHash: []byte("lee-session-hash-0123456789abcdef"), UserID: &uid,
		CSRFToken: "x", Data: []byte{}, CreatedAt: time.Now(), LastSeenAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	b.op.SetGroups("lee", "unmapped")
	_, err = b.signIn(t, "lee")
	wantRefused(t, err, "sso_no_group")
	sess, _, err := b.st.SessionAndUser(ctx, []byte("lee-session-hash-0123456789abcdef"))
	if err != nil || sess.RevokedAt == nil {
		t.Errorf("lee's open session after losing every group: %+v %v, want it revoked", sess, err)
	}
}

func TestTamperedStateIsRefused(t *testing.T) {
	b := setup(t)
	state, code := b.begin(t, b.p, "browser-1", "sam")
	_, err := b.p.Finish(t.Context(), "browser-1", state+"x", code, sso.Person{})
	wantRefused(t, err, "sso_state_unknown")
	_, err = b.p.Finish(t.Context(), "browser-1", "", code, sso.Person{})
	wantRefused(t, err, "sso_state_unknown")
	// The state is bound to the browser that began the sign-in.
	_, err = b.p.Finish(t.Context(), "browser-2", state, code, sso.Person{})
	wantRefused(t, err, "sso_state_other_browser")
}

func TestStateExpires(t *testing.T) {
	b := setup(t)
	state, code := b.begin(t, b.p, "browser-1", "sam")
	b.shift.Store(int64((10*time.Minute + time.Second) / time.Second))
	_, err := b.p.Finish(t.Context(), "browser-1", state, code, sso.Person{})
	wantRefused(t, err, "sso_state_expired")
}

func TestReplayedCodeIsRefused(t *testing.T) {
	b := setup(t)
	state, code := b.begin(t, b.p, "browser-1", "sam")
	if _, err := b.p.Finish(t.Context(), "browser-1", state, code, sso.Person{}); err != nil {
		t.Fatal(err)
	}
	// The callback's URL again: its state was used.
	_, err := b.p.Finish(t.Context(), "browser-1", state, code, sso.Person{})
	wantRefused(t, err, "sso_state_unknown")
	// The code with a fresh state of the same browser: the provider refuses it.
	fresh, _ := b.begin(t, b.p, "browser-1", "sam")
	_, err = b.p.Finish(t.Context(), "browser-1", fresh, code, sso.Person{})
	wantRefused(t, err, "sso_code_refused")
}

func TestIDTokenForAnotherAudienceIsRefused(t *testing.T) {
	b := setup(t)
	b.op.AddClient(ssotest.Client{ID: "another-app", Secret: secret, RedirectURL: redirectURL})
	p := b.provider(t, clientID)
	p.ExchangeAs("another-app", secret)
	state, code := b.begin(t, p, "browser-1", "sam")
	_, err := p.Finish(t.Context(), "browser-1", state, code, sso.Person{})
	wantRefused(t, err, "sso_token_invalid")
}

func TestWrongNonceIsRefused(t *testing.T) {
	b := setup(t)
	b.op.SetNonce(func(n string) string { return n + "-other" })
	_, err := b.signIn(t, "sam")
	wantRefused(t, err, "sso_nonce_mismatch")
}

func TestDisabledAccountIsRefused(t *testing.T) {
	b := setup(t)
	got, err := b.signIn(t, "sam")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.SetUserDisabled(t.Context(), got.User.ID, true, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err = b.signIn(t, "sam")
	wantRefused(t, err, "sso_account_disabled")
}

func TestEmailOfAnotherAccountIsNotTakenOver(t *testing.T) {
	b := setup(t)
	if _, err := b.st.CreateUser(t.Context(), store.NewUser{Email: "sam@example.test", Name: "Old Sam", Role: "admin",
		PasswordHash: "x", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	_, err := b.signIn(t, "sam")
	wantRefused(t, err, "sso_email_taken")
}

func TestBadConfigNamesTheFlagAndTheFix(t *testing.T) {
	b := setup(t)
	gone := httptest.NewServer(nil)
	gone.Close()
	good := sso.Config{Issuer: b.op.URL, ClientID: clientID, ClientSecret: secret, RedirectURL: redirectURL, GroupRoles: groupRoles}
	for _, tc := range []struct {
		name string
		edit func(*sso.Config)
		want []string
	}{
		{"issuer unreachable", func(c *sso.Config) { c.Issuer = gone.URL }, []string{"-oidc-issuer", "discovery failed", "reach"}},
		{"no group map", func(c *sso.Config) { c.GroupRoles = nil }, []string{"-oidc-group-roles", "support=agent"}},
		{"unknown role", func(c *sso.Config) { c.GroupRoles = map[string]accounts.Role{"it": "owner"} },
			[]string{"-oidc-group-roles", `"owner"`, "agent, manager or admin"}},
		{"no client id", func(c *sso.Config) { c.ClientID = "" }, []string{"-oidc-client-id"}},
	} {
		cfg := good
		tc.edit(&cfg)
		_, err := sso.New(context.Background(), cfg, b.st, nil, nil)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", tc.name, err, w)
			}
		}
	}
	if _, err := sso.ParseGroupRoles("support=agent,it=owner"); err == nil || !strings.Contains(err.Error(), "-oidc-group-roles") {
		t.Errorf("ParseGroupRoles with an unknown role: %v, want the flag named", err)
	}
	roles, err := sso.ParseGroupRoles(" support=agent, leads=manager ,it=admin")
	if err != nil || len(roles) != 3 || roles["leads"] != accounts.Manager {
		t.Errorf("ParseGroupRoles: %v %v", roles, err)
	}
}

func TestSignInWithoutAnEmailIsRefused(t *testing.T) {
	b := setup(t)
	b.op.AddUser("anon", "", "Anon", "support")
	_, err := b.signIn(t, "anon")
	wantRefused(t, err, "sso_no_email")
}
