package main

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSSOConfigNamesTheFlagAndTheFix: a single sign-on setting that cannot
// work stops the console at start with the flag and what to do.
func TestSSOConfigNamesTheFlagAndTheFix(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"no group map", map[string]string{"OIDC_ISSUER": "https://login.example.com", "OIDC_CLIENT_ID": "c", "OIDC_CLIENT_SECRET": "hunter2-secret"},
			nil, []string{"-oidc-group-roles is empty", "support=agent"}},
		{"unknown role", map[string]string{"OIDC_ISSUER": "https://login.example.com", "OIDC_CLIENT_ID": "c", "OIDC_CLIENT_SECRET": "hunter2-secret",
			"OIDC_GROUP_ROLES": "support=agent,it=owner"}, nil, []string{"-oidc-group-roles", `"owner"`, "agent, manager or admin"}},
		{"no secret", map[string]string{"OIDC_ISSUER": "https://login.example.com", "OIDC_CLIENT_ID": "c", "OIDC_GROUP_ROLES": "support=agent"},
			nil, []string{"-oidc-client-secret is empty"}},
		{"client without issuer", map[string]string{"OIDC_CLIENT_ID": "c"}, nil, []string{"-oidc-client-id is set but -oidc-issuer is not"}},
		{"passwords off without SSO", nil, []string{"-password-sign-in=false"}, []string{"-password-sign-in=false needs single sign-on"}},
	} {
		_, err := parseConfig(tc.args, func(k string) string { return tc.env[k] })
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", tc.name, err, w)
			}
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error repeats the client secret: %v", tc.name, err)
		}
	}
	c, err := parseConfig(nil, func(k string) string {
		return map[string]string{"OIDC_ISSUER": "https://login.example.com", "OIDC_CLIENT_ID": "c", "OIDC_CLIENT_SECRET": "s",
			"OIDC_GROUP_ROLES": "support=agent,leads=manager,it=admin", "PASSWORD_SIGN_IN": "false"}[k]
	})
	if err != nil || c.PasswordSignIn || c.OIDCGroupsClaim != "groups" || strings.Join(c.ssoScopes(), " ") != "email profile" {
		t.Errorf("a good configuration: %+v %v", c, err)
	}
}

// TestSSOUnreachableIssuerStopsTheStart: discovery runs at start, and its
// failure names -oidc-issuer.
func TestSSOUnreachableIssuerStopsTheStart(t *testing.T) {
	gone := httptest.NewServer(nil)
	gone.Close()
	c, err := parseConfig(nil, func(k string) string {
		return map[string]string{"OIDC_ISSUER": gone.URL, "OIDC_CLIENT_ID": "c", "OIDC_CLIENT_SECRET": "s",
			"OIDC_GROUP_ROLES": "support=agent"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.startSSO(t.Context(), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), "-oidc-issuer") || !strings.Contains(err.Error(), "reach") {
		t.Errorf("unreachable issuer: %v, want -oidc-issuer named with the fix", err)
	}
}
