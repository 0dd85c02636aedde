package sso

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"countersign/internal/accounts"
)

// Config is how the console reaches the business's OpenID provider and
// how it turns the provider's groups into console roles.
type Config struct {
	// Issuer is the provider's issuer URL (-oidc-issuer); discovery reads
	// Issuer + "/.well-known/openid-configuration".
	Issuer string
	// ClientID and ClientSecret are the console's registration at the
	// provider (-oidc-client-id, -oidc-client-secret).
	ClientID     string
	ClientSecret string
	// RedirectURL is the console's callback as registered at the provider:
	// the console's public URL + "/sign-in/sso/callback".
	RedirectURL string
	// Scopes are asked for besides "openid" (-oidc-scopes).
	Scopes []string
	// GroupsClaim is the ID token claim that lists the person's groups
	// (-oidc-groups-claim, "groups" by default).
	GroupsClaim string
	// GroupRoles maps a provider group to a console role (-oidc-group-roles).
	// A person in several mapped groups gets the highest of their roles.
	GroupRoles map[string]accounts.Role
	// Name is what the sign-in page calls the provider ("Sign in with
	// <Name>"); the issuer's host when empty.
	Name string
}

// staffRoles are the roles a group may map to, lowest first: the order
// decides the highest role of a person in several groups.
var staffRoles = []accounts.Role{accounts.Agent, accounts.Manager, accounts.Admin}

// ParseGroupRoles reads -oidc-group-roles, e.g.
// "support=agent,leads=manager,it=admin".
func ParseGroupRoles(s string) (map[string]accounts.Role, error) {
	out := map[string]accounts.Role{}
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		group, role, ok := strings.Cut(pair, "=")
		group, role = strings.TrimSpace(group), strings.TrimSpace(role)
		if !ok || group == "" || role == "" {
			return nil, fmt.Errorf("-oidc-group-roles: %q is not group=role; write e.g. \"support=agent,leads=manager,it=admin\"", pair)
		}
		r := accounts.Role(role)
		if !slices.Contains(staffRoles, r) {
			return nil, fmt.Errorf("-oidc-group-roles: group %q maps to %q, which is not a staff role; use agent, manager or admin", group, role)
		}
		out[group] = r
	}
	return out, nil
}

// check names the flag and the fix of the first thing wrong with c.
func (c Config) check() error {
	u, err := url.Parse(c.Issuer)
	switch {
	case c.Issuer == "":
		return fmt.Errorf("-oidc-issuer is empty; set it to the provider's issuer URL, e.g. https://login.example.com/realms/staff")
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		return fmt.Errorf("-oidc-issuer %q is not an http(s) URL; set it to the provider's issuer URL", c.Issuer)
	case c.ClientID == "":
		return fmt.Errorf("-oidc-client-id is empty; set it to the client id the provider gave the console")
	case c.ClientSecret == "":
		return fmt.Errorf("-oidc-client-secret is empty; set it (or OIDC_CLIENT_SECRET) to the client secret the provider gave the console")
	case c.RedirectURL == "":
		return fmt.Errorf("the OpenID redirect URL is empty; set -public-url to the console's address")
	case len(c.GroupRoles) == 0:
		return fmt.Errorf("-oidc-group-roles is empty: nobody could sign in; map the provider's groups to roles, e.g. \"support=agent,leads=manager,it=admin\"")
	}
	for group, role := range c.GroupRoles {
		if !slices.Contains(staffRoles, role) {
			return fmt.Errorf("-oidc-group-roles: group %q maps to %q, which is not a staff role; use agent, manager or admin", group, role)
		}
	}
	return nil
}

// roleOf is the highest role any of groups maps to; false when none does.
func (c Config) roleOf(groups []string) (accounts.Role, bool) {
	best := -1
	for _, g := range groups {
		if r, ok := c.GroupRoles[g]; ok {
			best = max(best, slices.Index(staffRoles, r))
		}
	}
	if best < 0 {
		return "", false
	}
	return staffRoles[best], true
}
