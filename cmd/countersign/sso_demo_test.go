package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/internal/slowtest"
	"countersign/internal/sso/localidp"
)

// TestDemoSSOConfigNamesTheFlagAndTheFix: -oidc-demo is for demo mode,
// brings its own provider, and listens on loopback only.
func TestDemoSSOConfigNamesTheFlagAndTheFix(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string // "" means valid
	}{
		{map[string]string{"OIDC_DEMO": "true"}, ""},
		{map[string]string{"OIDC_DEMO": "true", "PASSWORD_SIGN_IN": "false"}, ""},
		{map[string]string{"OIDC_DEMO": "true", "DATABASE_URL": "postgres://x/y"}, "-oidc-demo is for demo mode"},
		{map[string]string{"OIDC_DEMO": "true", "OIDC_ISSUER": "https://login.example.com"}, "-oidc-demo starts a provider of its own"},
		{map[string]string{"OIDC_DEMO": "true", "OIDC_DEMO_ADDR": "0.0.0.0:9998"}, "-oidc-demo-addr \"0.0.0.0:9998\": want a loopback host:port"},
	} {
		_, err := parseConfig(nil, func(k string) string { return tc.env[k] })
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.env, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want %q", tc.env, err, tc.want)
		}
	}
}

// TestDemoWithTheTestProvider runs the demo as `make run OIDC_DEMO=true`
// does: it prints the test provider's address and people beside the demo
// users, and one of them signs in through the provider's login form to the
// console's home page with the role their group maps to.
func TestDemoWithTheTestProvider(t *testing.T) {
	slowtest.Skip(t, "builds the console and starts it with the test provider")
	t.Parallel()
	bin := consoleBinary(t)
	dataDir := consoleDataDir(t)
	c := startConsole(t, bin, dataDir, "OIDC_DEMO=true", "OIDC_DEMO_ADDR="+freeAddr(t))
	defer c.stop(t)
	var issuer string
	printed := map[string]string{} // user name → the line
	// The console prints nothing more once it serves; a second after the
	// last line the printout is over.
	for done := false; !done; {
		select {
		case line, ok := <-c.lines:
			if _, rest, found := strings.Cut(line, "Single sign-on: the test OpenID provider runs at "); found {
				issuer, _, _ = strings.Cut(rest, " ")
			} else if f := strings.Fields(line); issuer != "" && len(f) > 0 {
				printed[f[0]] = line
			}
			done = !ok || (issuer != "" && strings.TrimSpace(line) == "")
		case <-time.After(time.Second):
			done = true
		}
	}
	if !strings.HasPrefix(issuer, "http://127.0.0.1:") {
		t.Fatalf("the console did not print the provider's address (got %q)\n%s", issuer, c.stderr.String())
	}
	for _, p := range localidp.DemoPeople {
		if line := printed[p.Username]; !strings.Contains(line, p.Email) || !strings.Contains(line, "group "+p.Group) {
			t.Errorf("the printout's line for %s is %q, want its e-mail and group", p.Username, line)
		}
	}
	if !strings.Contains(printed["sam"], "→ agent") || !strings.Contains(printed["ida"], "→ admin") {
		t.Errorf("the printout does not say the roles: %q, %q", printed["sam"], printed["ida"])
	}

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	signIn := fetch(t, browser, http.MethodGet, c.url+"/sign-in", nil)
	if !strings.Contains(signIn.body, "Sign in with Test provider") {
		t.Fatalf("the sign-in page offers no single sign-on:\n%s", signIn.body)
	}
	form := fetch(t, browser, http.MethodGet, c.url+"/sign-in/sso", nil)
	id := form.url.Query().Get("authRequestID")
	if !strings.HasPrefix(form.url.String(), issuer) || id == "" {
		t.Fatalf("/sign-in/sso led to %s, want the provider's login form", form.url)
	}
	home := fetch(t, browser, http.MethodPost, issuer+"/login/username",
		url.Values{"id": {id}, "username": {"sam"}, "password": {localidp.Password}})
	if home.status != http.StatusOK || home.url.String() != c.url+"/" || !strings.Contains(home.body, "Sam Support") ||
		!strings.Contains(home.body, `href="/queue"`) {
		t.Fatalf("after the provider's form: %d at %s, want the agent's home page\n%s", home.status, home.url, home.body)
	}
}

type fetched struct {
	status int
	url    *url.URL
	body   string
}

// fetch sends a request through c (following redirects) and reads the
// answer.
func fetch(t *testing.T, c *http.Client, method, target string, form url.Values) fetched {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return fetched{status: res.StatusCode, url: res.Request.URL, body: string(b)}
}
