package console_test

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
	"countersign/static"
)

// TestRoleMatrix walks every route the router has and checks it against the
// rule declared for it, for a visitor and for each role. A route registered
// without a rule fails here.
func TestRoleMatrix(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	victim := b.CreateUser(t, accounts.Customer)
	params := map[string]string{":id": strconv.FormatInt(victim.ID, 10), "*": strings.TrimPrefix(static.URL("app.css"), "/static/")}

	routes := b.Web.Echo().Routes()
	if len(routes) < 10 {
		t.Fatalf("only %d routes registered; the table did not load", len(routes))
	}
	identities := append([]accounts.Role{""}, accounts.Roles...)
	for _, r := range routes {
		roles, public, ok := b.Web.AccessRule(r.Method, r.Path)
		if !ok {
			t.Errorf("%s %s has no access rule: add it to its audience's Routes (web/api, web/customer, web/console) or web/routes.go", r.Method, r.Path)
			continue
		}
		path := r.Path
		for k, v := range params {
			path = strings.ReplaceAll(path, k, v)
		}
		if b.Web.BearerRoute(r.Method, r.Path) {
			checkBearerRoute(t, b, r.Method, path, identities)
			continue
		}
		for _, role := range identities {
			c := b.Client(t)
			if role != "" {
				c.MustSignIn(b.Users[role])
			}
			var res webtest.Response
			if r.Method == http.MethodGet {
				res = c.Get(path)
			} else {
				var tok string
				if role == "" {
					tok = c.CSRF("/sign-in")
				} else {
					tok = c.CSRF("/")
				}
				res = c.Post(path, url.Values{"_csrf": {tok}, "role": {"agent"}})
			}
			toSignIn := res.StatusCode == http.StatusSeeOther && strings.HasPrefix(res.Header.Get("Location"), "/sign-in?next=")
			denied := res.StatusCode == http.StatusForbidden || toSignIn ||
				// A public route may answer 401 on its own (bad credentials).
				(res.StatusCode == http.StatusUnauthorized && !public)
			allowed := public || (role != "" && slices.Contains(roles, role))
			who := string(role)
			if who == "" {
				who = "visitor"
			}
			switch {
			case allowed && denied:
				t.Errorf("%s %s as %s: denied (%d), but the rule allows it", r.Method, r.Path, who, res.StatusCode)
			case !allowed && role == "" && !(toSignIn || res.StatusCode == http.StatusUnauthorized):
				t.Errorf("%s %s as visitor: %d, want a redirect to sign-in or 401", r.Method, r.Path, res.StatusCode)
			case !allowed && role != "" && res.StatusCode != http.StatusForbidden:
				t.Errorf("%s %s as %s: %d, want 403", r.Method, r.Path, who, res.StatusCode)
			}
		}
	}
}

// checkBearerRoute checks a route of the assistant's API: without a key,
// every identity — a visitor or a signed-in user with a cookie — gets 401;
// a valid key is let through (unknown ids answer 404 or a 4xx error, never
// 401, 403 or 5xx).
func checkBearerRoute(t *testing.T, b *webtest.Stack, method, path string, identities []accounts.Role) {
	t.Helper()
	for _, role := range identities {
		c := b.Client(t)
		if role != "" {
			c.MustSignIn(b.Users[role])
		}
		var res webtest.Response
		if method == http.MethodGet {
			res = c.Get(path)
		} else {
			page := "/sign-in"
			if role != "" {
				page = "/"
			}
			res = c.Post(path, url.Values{"_csrf": {c.CSRF(page)}, "role": {"agent"}})
		}
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s as %q with a cookie and no key: %d, want 401", method, path, role, res.StatusCode)
		}
	}
	key := matrixKey(t, b)
	req, _ := http.NewRequest(method, b.Server.URL+path, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res := b.Client(t).Do(req)
	if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden || res.StatusCode >= 500 {
		t.Errorf("%s %s with a valid key: %d, want it let through\n%s", method, path, res.StatusCode, res.Text)
	}
}

// matrixKeys holds each stack's (*webtest.Stack) key of matrixKey.
var matrixKeys sync.Map

// matrixKey returns a live key of an assistant made once per stack.
func matrixKey(t *testing.T, b *webtest.Stack) string {
	t.Helper()
	if k, ok := matrixKeys.Load(b); ok {
		return k.(string)
	}
	_, key := b.NewAssistant(t, "matrix-bot")
	matrixKeys.Store(b, key)
	return key
}
