package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/static"
)

// TestRoleMatrix walks every route the router has and checks it against the
// rule declared for it, for a visitor and for each role. A route registered
// without a rule fails here.
func TestRoleMatrix(t *testing.T) {
	t.Parallel()
	b := setup(t)
	victim := b.createUser(t, accounts.Customer)
	params := map[string]string{":id": strconv.FormatInt(victim.ID, 10), "*": strings.TrimPrefix(static.URL("app.css"), "/static/")}

	routes := b.web.Echo().Routes()
	if len(routes) < 10 {
		t.Fatalf("only %d routes registered; the table did not load", len(routes))
	}
	identities := append([]accounts.Role{""}, accounts.Roles...)
	for _, r := range routes {
		roles, public, ok := b.web.AccessRule(r.Method, r.Path)
		if !ok {
			t.Errorf("%s %s has no access rule: add it to its audience's Routes (web/api, web/customer, web/console) or web/routes.go", r.Method, r.Path)
			continue
		}
		path := r.Path
		for k, v := range params {
			path = strings.ReplaceAll(path, k, v)
		}
		if b.web.BearerRoute(r.Method, r.Path) {
			checkBearerRoute(t, b, r.Method, path, identities)
			continue
		}
		for _, role := range identities {
			c := b.client(t)
			if role != "" {
				c.mustSignIn(b.users[role])
			}
			var res response
			if r.Method == http.MethodGet {
				res = c.get(path)
			} else {
				var tok string
				if role == "" {
					tok = c.csrf("/sign-in")
				} else {
					tok = c.csrf("/")
				}
				res = c.post(path, url.Values{"_csrf": {tok}, "role": {"agent"}})
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
func checkBearerRoute(t *testing.T, b *testBundle, method, path string, identities []accounts.Role) {
	t.Helper()
	for _, role := range identities {
		c := b.client(t)
		if role != "" {
			c.mustSignIn(b.users[role])
		}
		var res response
		if method == http.MethodGet {
			res = c.get(path)
		} else {
			page := "/sign-in"
			if role != "" {
				page = "/"
			}
			res = c.post(path, url.Values{"_csrf": {c.csrf(page)}, "role": {"agent"}})
		}
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s as %q with a cookie and no key: %d, want 401", method, path, role, res.StatusCode)
		}
	}
	key := matrixKey(t, b)
	req, _ := http.NewRequest(method, b.srv.URL+path, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res := b.client(t).do(req)
	if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden || res.StatusCode >= 500 {
		t.Errorf("%s %s with a valid key: %d, want it let through\n%s", method, path, res.StatusCode, res.body)
	}
}
