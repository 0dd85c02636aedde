package console_test

import (
	"bytes"
	"context"
	"encoding/gob"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gorilla/securecookie"
	"github.com/pquerna/otp/totp"

	"countersign/internal/accounts"
	"countersign/web/kit"
	"countersign/web/webtest"
)

// enrolTOTP sets up an authenticator app for u on the account page and
// returns its secret and the recovery codes shown.
func enrolTOTP(t *testing.T, b *webtest.Stack, u webtest.User) (string, []string) {
	t.Helper()
	c := b.Client(t)
	c.MustSignIn(u)
	tok := c.CSRF("/account/factors")
	res := c.Post("/account/factors/totp", url.Values{"_csrf": {tok}, "password": {u.Password}})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("set up: %d\n%s", res.StatusCode, res.Text)
	}
	doc := res.Doc(t)
	secret := strings.ReplaceAll(doc.Find(`[data-testid="factor-secret"]`).Text(), " ", "")
	if src, _ := doc.Find(`img[data-testid="factor-qr"]`).Attr("src"); secret == "" || !strings.HasPrefix(src, "data:image/png;base64,") {
		t.Fatalf("no key or QR code shown: %q, %.40q", secret, src)
	}
	res = c.Post("/account/factors/totp/confirm", url.Values{"_csrf": {tok}, "code": {totpCode(t, b, secret)}})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("confirm: %d\n%s", res.StatusCode, res.Text)
	}
	var codes []string
	res.Doc(t).Find(`[data-testid="recovery-code"]`).Each(func(_ int, s *goquery.Selection) { codes = append(codes, s.Text()) })
	if len(codes) != 10 {
		t.Fatalf("%d recovery codes shown, want 10", len(codes))
	}
	b.Clock.Advance(30 * time.Second) // the confirming code's step is spent
	return secret, codes
}

func totpCode(t *testing.T, b *webtest.Stack, secret string) string {
	t.Helper()
	code, err := totp.GenerateCode(secret, b.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// signInToFactor signs in with u's password and wants the factor step.
func signInToFactor(t *testing.T, c *webtest.Client, u webtest.User) {
	t.Helper()
	res := c.SignIn(u)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != kit.FactorPath {
		t.Fatalf("password of a person with a factor: %d to %q, want 303 to %s", res.StatusCode, res.Header.Get("Location"), kit.FactorPath)
	}
}

func postCode(c *webtest.Client, code string) webtest.Response {
	return c.Post(kit.FactorPath, url.Values{"_csrf": {c.CSRF(kit.FactorPath)}, "code": {code}})
}

// identifiedBy reads how the session of c's cookie says its person proved
// who they are.
func identifiedBy(t *testing.T, c *webtest.Client) string {
	t.Helper()
	var id string
	ck := c.SessionCookie()
	if ck == nil {
		t.Fatal("no session cookie")
	}
	if err := securecookie.DecodeMulti(ck.Name, ck.Value, &id, securecookie.CodecsFromPairs(webtest.SessionKeys...)...); err != nil {
		t.Fatal(err)
	}
	var data []byte
	if err := c.Stack.Store.Pool().QueryRow(context.Background(), `SELECT data FROM sessions WHERE id_hash = $1`,
		kit.HashID(id)).Scan(&data); err != nil {
		t.Fatal(err)
	}
	values := map[any]any{}
	if len(data) > 0 {
		if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&values); err != nil {
			t.Fatal(err)
		}
	}
	by, _ := values[kit.KeyIdentifiedBy].(string)
	return by
}

func TestTOTPSignInAsksForTheCodeBeforeAnyPage(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	agent := b.Users[accounts.Agent]
	secret, _ := enrolTOTP(t, b, agent)

	c := b.Client(t)
	signInToFactor(t, c, agent)
	for _, path := range []string{"/queue", "/", "/account/password", "/tasks"} {
		if res := c.Get(path); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != kit.FactorPath {
			t.Errorf("GET %s before the code: %d to %q, want 303 to %s", path, res.StatusCode, res.Header.Get("Location"), kit.FactorPath)
		}
	}
	css, _ := c.Get(kit.FactorPath).Doc(t).Find(`link[rel="stylesheet"]`).Attr("href")
	if res := c.Get(css); css == "" || res.StatusCode != http.StatusOK {
		t.Errorf("the style sheet %q before the code: %d", css, res.StatusCode)
	}
	res := postCode(c, totpCode(t, b, secret))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("a valid code: %d to %q\n%s", res.StatusCode, res.Header.Get("Location"), res.Text)
	}
	if res := c.Get("/queue"); res.StatusCode != http.StatusOK {
		t.Fatalf("the queue after the code: %d", res.StatusCode)
	}
	if by := identifiedBy(t, c); by != "password+totp" {
		t.Errorf("identified by %q, want password+totp", by)
	}
	// A person without a factor, of a role that needs none: the password.
	m := b.Client(t)
	m.MustSignIn(b.Users[accounts.Manager])
	if by := identifiedBy(t, m); by != "password" {
		t.Errorf("password only: identified by %q, want password", by)
	}
}

func TestTOTPCodeReusedWithinItsWindowRefusedAtSignIn(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	agent := b.Users[accounts.Agent]
	secret, _ := enrolTOTP(t, b, agent)
	code := totpCode(t, b, secret)
	first := b.Client(t)
	signInToFactor(t, first, agent)
	if res := postCode(first, code); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the code once: %d", res.StatusCode)
	}
	b.Clock.Advance(10 * time.Second)
	second := b.Client(t)
	signInToFactor(t, second, agent)
	res := postCode(second, code)
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("the same code again within its window: %d, want 422", res.StatusCode)
	}
	doc := res.Doc(t)
	if doc.Find(`[data-testid="code-error"]`).Length() != 1 || doc.Find(`[data-testid="error-summary"]`).Length() != 1 {
		t.Errorf("no field error or summary:\n%s", res.Text)
	}
	if res := second.Get("/queue"); res.Header.Get("Location") != kit.FactorPath {
		t.Errorf("after a refused code the queue sends to %q, want the factor step", res.Header.Get("Location"))
	}
}

// TestTOTPWrongCodesShareTheSignInThrottle: the right password and four
// wrong codes are the five attempts of the account from one address; the
// right code is then refused with 429, and so is the password.
func TestTOTPWrongCodesShareTheSignInThrottle(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	agent := b.Users[accounts.Agent]
	secret, _ := enrolTOTP(t, b, agent)
	c := b.Client(t)
	signInToFactor(t, c, agent)
	for i := range 4 {
		if res := postCode(c, "000000"); res.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("wrong code %d: %d, want 422", i+1, res.StatusCode)
		}
	}
	res := postCode(c, totpCode(t, b, secret))
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("the right code after 4 wrong: %d (Retry-After %q), want 429", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if res.Doc(t).Find(`[data-testid="factor-error"]`).Text() == "" {
		t.Error("429 without a message")
	}
	if res := b.Client(t).SignIn(agent); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the password after 4 wrong codes: %d, want 429", res.StatusCode)
	}
	b.Clock.Advance(15*time.Minute + time.Second)
	c = b.Client(t)
	signInToFactor(t, c, agent)
	if res := postCode(c, totpCode(t, b, secret)); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("after the window: %d, want 303", res.StatusCode)
	}
}

func TestRecoveryCodeSignsInOnce(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	agent := b.Users[accounts.Agent]
	_, codes := enrolTOTP(t, b, agent)
	c := b.Client(t)
	signInToFactor(t, c, agent)
	if res := postCode(c, strings.ToUpper(codes[0])); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a recovery code: %d\n%s", res.StatusCode, res.Text)
	}
	if by := identifiedBy(t, c); by != "password+recovery" {
		t.Errorf("identified by %q, want password+recovery", by)
	}
	c = b.Client(t)
	signInToFactor(t, c, agent)
	if res := postCode(c, codes[0]); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("the recovery code again: %d, want 422", res.StatusCode)
	}
}

// TestFactorRoleRequirementEnrolsBeforeAnyPage: once an admin requires a
// second factor of agents, an agent without one sets it up at sign-in
// before any page opens.
func TestFactorRoleRequirementEnrolsBeforeAnyPage(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	before := b.Client(t) // an agent signed in with a password alone
	before.MustSignIn(b.Users[accounts.Agent])
	admin := b.Client(t)
	admin.MustSignIn(b.Users[accounts.Admin])
	res := admin.Post("/admin/users/factors", url.Values{"_csrf": {admin.CSRF("/admin/users")}, "role": {"agent"}, "required": {"true"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("require for agents: %d\n%s", res.StatusCode, res.Text)
	}
	if got := admin.Get("/admin/users").Doc(t).Find(`[data-testid="factor-role-agent"]`).Text(); !strings.Contains(got, "Required") {
		t.Errorf("the users page shows agents as %q", got)
	}

	if res := before.Get("/queue"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/sign-in?") {
		t.Errorf("the agent's session from before the requirement: GET /queue %d to %q, want the sign-in", res.StatusCode, res.Header.Get("Location"))
	}
	agent := b.Users[accounts.Agent]
	c := b.Client(t)
	signInToFactor(t, c, agent)
	if res := c.Get("/queue"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != kit.FactorPath {
		t.Fatalf("GET /queue before setting up: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	page := c.Get(kit.FactorPath)
	if page.Doc(t).Find(`[data-testid="factor-enrol-needed"]`).Length() != 1 {
		t.Fatalf("the factor step does not ask to set one up:\n%s", page.Text)
	}
	res = c.Post(kit.FactorPath+"/enrol", url.Values{"_csrf": {c.CSRF(kit.FactorPath)}})
	secret := strings.ReplaceAll(res.Doc(t).Find(`[data-testid="factor-secret"]`).Text(), " ", "")
	if res.StatusCode != http.StatusOK || secret == "" {
		t.Fatalf("set up at sign-in: %d, key %q", res.StatusCode, secret)
	}
	if res := postCode(c, "123"); res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a short code: %d, want 422", res.StatusCode)
	}
	res = postCode(c, totpCode(t, b, secret))
	if res.StatusCode != http.StatusOK || res.Doc(t).Find(`[data-testid="recovery-code"]`).Length() != 10 {
		t.Fatalf("confirming at sign-in: %d\n%s", res.StatusCode, res.Text)
	}
	if res := c.Get("/queue"); res.StatusCode != http.StatusOK {
		t.Fatalf("the queue once set up: %d", res.StatusCode)
	}
	if by := identifiedBy(t, c); by != "password+totp" {
		t.Errorf("identified by %q, want password+totp", by)
	}
	// Managers still need none.
	b.Client(t).MustSignIn(b.Users[accounts.Manager])
}

func TestFactorRequirementAdminOnlyAndAudited(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	for _, r := range []accounts.Role{accounts.Agent, accounts.Manager} {
		c := b.Client(t)
		c.MustSignIn(b.Users[r])
		res := c.Post("/admin/users/factors", url.Values{"_csrf": {c.CSRF("/")}, "role": {"agent"}, "required": {"true"}})
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("%s requiring a factor: %d, want 403", r, res.StatusCode)
		}
	}
	admin := b.Client(t)
	admin.MustSignIn(b.Users[accounts.Admin])
	if res := admin.Post("/admin/users/factors", url.Values{"role": {"agent"}, "required": {"true"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d, want 403", res.StatusCode)
	}
	other := b.Client(t) // the same admin in another browser
	other.MustSignIn(b.Users[accounts.Admin])
	tok := admin.CSRF("/admin/users")
	if res := admin.Post("/admin/users/factors", url.Values{"_csrf": {tok}, "role": {"admin"}, "required": {"true"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("require for admins: %d", res.StatusCode)
	}
	if res := admin.Get("/admin/users"); res.StatusCode != http.StatusOK {
		t.Errorf("the admin's own session after requiring a factor of admins: %d, want 200", res.StatusCode)
	}
	if res := other.Get("/admin/users"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("the admin's other session: %d, want 303 to the sign-in", res.StatusCode)
	}
	for _, req := range []string{"true", "false"} {
		if res := admin.Post("/admin/users/factors", url.Values{"_csrf": {tok}, "role": {"manager"}, "required": {req}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("required=%s: %d", req, res.StatusCode)
		}
	}
	var n int
	if err := b.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM events WHERE action = 'factor.requirement_changed'
		AND actor_kind = 'user' AND actor_id = $1::bigint::text AND data->>'role' = 'manager'`, b.Users[accounts.Admin].ID).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d audit events, %v; want 2", n, err)
	}
}

// TestFactorStepWaitsFiveMinutes: a password whose code never came opens
// nothing later; the person signs in again. Signing out ends the wait.
func TestFactorStepWaitsFiveMinutes(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	agent := b.Users[accounts.Agent]
	enrolTOTP(t, b, agent)
	c := b.Client(t)
	signInToFactor(t, c, agent)
	b.Clock.Advance(5*time.Minute + time.Second)
	if res := c.Get("/queue"); !strings.HasPrefix(res.Header.Get("Location"), "/sign-in?") {
		t.Errorf("GET /queue after the wait: to %q, want the sign-in", res.Header.Get("Location"))
	}
	if res := c.Get(kit.FactorPath); res.Header.Get("Location") != "/sign-in" {
		t.Errorf("the factor step after the wait: to %q, want /sign-in", res.Header.Get("Location"))
	}
	c = b.Client(t)
	signInToFactor(t, c, agent)
	res := c.Post("/sign-out", url.Values{"_csrf": {c.CSRF(kit.FactorPath)}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/sign-in?signed_out=1" {
		t.Fatalf("sign-out while waiting: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res := c.Get("/queue"); !strings.HasPrefix(res.Header.Get("Location"), "/sign-in?") {
		t.Errorf("GET /queue after sign-out: to %q", res.Header.Get("Location"))
	}
}

// TestFactorSetUpAsksForThePasswordAgain: a borrowed session cannot set up
// its own authenticator app on someone's account (which would lock them
// out) or take their recovery codes: both ask for the password, and wrong
// ones count in the sign-in throttle.
func TestFactorSetUpAsksForThePasswordAgain(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	agent := b.Users[accounts.Agent]
	c := b.Client(t)
	c.MustSignIn(agent)
	tok := c.CSRF("/account/factors")
	res := c.Post("/account/factors/totp", url.Values{"_csrf": {tok}, "password": {"not my password"}})
	if res.StatusCode != http.StatusUnprocessableEntity || res.Doc(t).Find(`[data-testid="password-error"]`).Length() != 1 ||
		res.Doc(t).Find(`[data-testid="factor-secret"]`).Length() != 0 {
		t.Fatalf("set up with a wrong password: %d\n%s", res.StatusCode, res.Text)
	}
	for range 4 {
		c.Post("/account/factors/totp", url.Values{"_csrf": {tok}, "password": {"not my password"}})
	}
	if res := c.Post("/account/factors/totp", url.Values{"_csrf": {tok}, "password": {agent.Password}}); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the right password after 5 wrong: %d, want 429", res.StatusCode)
	}
	b.Clock.Advance(15*time.Minute + time.Second)
	enrolTOTP(t, b, agent)
	res = c.Post("/account/factors/recovery", url.Values{"_csrf": {tok}, "password": {"not my password"}})
	if res.StatusCode != http.StatusUnprocessableEntity || res.Doc(t).Find(`[data-testid="recovery-code"]`).Length() != 0 {
		t.Fatalf("new recovery codes with a wrong password: %d", res.StatusCode)
	}
	res = c.Post("/account/factors/recovery", url.Values{"_csrf": {tok}, "password": {agent.Password}})
	if res.StatusCode != http.StatusOK || res.Doc(t).Find(`[data-testid="recovery-code"]`).Length() != 10 {
		t.Fatalf("new recovery codes: %d", res.StatusCode)
	}
}
