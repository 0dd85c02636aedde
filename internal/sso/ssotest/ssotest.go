// Package ssotest gives tests a real OpenID Connect provider on loopback
// (internal/sso/localidp) that stops when the test ends, and signs a
// person in at it without a browser.
package ssotest

import (
	"net/url"
	"testing"

	"countersign/internal/sso/localidp"
)

// OP is a running provider.
type OP = localidp.OP

// Client is a registration of a relying party at the provider.
type Client = localidp.Client

// Password is every provider user's password.
const Password = localidp.Password

// Start runs a provider on a loopback port until the test ends.
func Start(t testing.TB) *OP {
	t.Helper()
	o, err := localidp.Serve("127.0.0.1:0")
	if err != nil {
		t.Fatalf("ssotest: %v", err)
	}
	t.Cleanup(o.Close)
	return o
}

// Login follows authURL at the provider, signs in as username and returns
// where the provider sends the browser back (the client's redirect URL
// with its code and state), failing the test when the provider does not.
func Login(t testing.TB, o *OP, authURL, username string) *url.URL {
	t.Helper()
	loc, err := o.Login(authURL, username)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
