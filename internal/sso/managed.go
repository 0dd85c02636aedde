package sso

import "context"

// ManagedAccounts maps each account an OpenID provider manages to its
// issuer: the provider decides their role at every sign-in, and they have
// no console password anyone knows.
func (p *Provider) ManagedAccounts(ctx context.Context) (map[int64]string, error) {
	return p.store.StaffIssuers(ctx)
}

// ManagedBy is the issuer of the provider that manages userID's account,
// or "" for an account of the console's own.
func (p *Provider) ManagedBy(ctx context.Context, userID int64) (string, error) {
	return p.store.StaffIssuerOf(ctx, userID)
}
