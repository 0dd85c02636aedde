package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"countersign/internal/sso"
	"countersign/store"
)

// ssoCallbackPath is where the provider sends the browser back; register
// -public-url + this path as the console's redirect URI at the provider.
const ssoCallbackPath = "/sign-in/sso/callback"

// ssoEnabled reports whether staff sign in through an OpenID provider.
func (c config) ssoEnabled() bool { return c.OIDCIssuer != "" }

// ssoScopes are -oidc-scopes as a list (commas or spaces between them).
func (c config) ssoScopes() []string {
	return strings.FieldsFunc(c.OIDCScopes, func(r rune) bool { return r == ',' || r == ' ' })
}

// validateSSO names each OpenID setting that cannot work, with its fix.
// The issuer is reached at start (startSSO), not here.
func (c config) validateSSO() []string {
	if c.OIDCDemo {
		return c.validateDemoSSO()
	}
	var problems []string
	if !c.ssoEnabled() {
		for name, v := range map[string]string{"-oidc-client-id": c.OIDCClientID, "-oidc-client-secret": c.OIDCClientSecret,
			"-oidc-group-roles": c.OIDCGroupRoles} {
			if v != "" {
				problems = append(problems, name+" is set but -oidc-issuer is not: set -oidc-issuer to the provider's issuer URL, or drop "+name)
			}
		}
		if !c.PasswordSignIn {
			problems = append(problems, "-password-sign-in=false needs single sign-on, or staff have no way in: set -oidc-issuer and the other -oidc-* flags")
		}
		return problems
	}
	if c.OIDCClientID == "" {
		problems = append(problems, "-oidc-client-id is empty: set it to the client id the provider gave the console")
	}
	if c.OIDCClientSecret == "" {
		problems = append(problems, "-oidc-client-secret is empty: set it (better: OIDC_CLIENT_SECRET) to the client secret the provider gave the console")
	}
	if roles, err := sso.ParseGroupRoles(c.OIDCGroupRoles); err != nil {
		problems = append(problems, err.Error())
	} else if len(roles) == 0 {
		problems = append(problems, "-oidc-group-roles is empty: nobody could sign in; map the provider's groups to roles, e.g. \"support=agent,leads=manager,it=admin\"")
	}
	if c.OIDCGroupsClaim == "" {
		problems = append(problems, "-oidc-groups-claim is empty: name the ID token claim that lists the person's groups (often \"groups\")")
	}
	return problems
}

// startSSO reads the provider's discovery document; an error names the
// flag and the fix, and stops the console at start.
func (c config) startSSO(ctx context.Context, st *store.Store, log *slog.Logger) (*sso.Provider, error) {
	if !c.ssoEnabled() {
		return nil, nil
	}
	roles, err := sso.ParseGroupRoles(c.OIDCGroupRoles)
	if err != nil {
		return nil, err
	}
	redirect := strings.TrimSuffix(c.publicBase(), "/") + ssoCallbackPath
	p, err := sso.New(ctx, sso.Config{Issuer: c.OIDCIssuer, ClientID: c.OIDCClientID, ClientSecret: c.OIDCClientSecret,
		RedirectURL: redirect, Scopes: c.ssoScopes(), GroupsClaim: c.OIDCGroupsClaim, GroupRoles: roles, Name: c.OIDCName},
		st, nil, time.Now)
	if err != nil {
		return nil, fmt.Errorf("single sign-on: %w", err)
	}
	// The secret stays out of the log; the rest helps whoever set it up.
	log.Info("staff sign in through an OpenID provider", "issuer", p.Issuer(), "client_id", c.OIDCClientID,
		"redirect_url", redirect, "groups_claim", c.OIDCGroupsClaim, "group_roles", c.OIDCGroupRoles,
		"password_sign_in_for_staff", c.PasswordSignIn)
	return p, nil
}
