package httpadapter

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"

	"countersign/internal/adapter"
)

// How every request authenticates. A secret is read from its environment
// variable when the file is loaded, so that a missing one stops the start,
// and lives only inside the authorizer: it is never in an error, a log
// line, a quote or what the conformance suite records of a request.

// authorizer gives each request its credential. An error means the request
// was not sent.
type authorizer interface {
	credential(ctx context.Context) (credential, error)
}

// credential is what one request carries.
type credential interface {
	// apply adds it to req, whose body is body.
	apply(req *http.Request, body []byte)
	// refused is told that the system answered 401 to a request that
	// carried it; true when it was dropped and a fresh one will be
	// fetched (a token), false when nothing can change (a static secret).
	refused() bool
}

// static is a credential that never changes: no authentication, or a
// secret sent as it is.
type static func(*http.Request)

func (s static) credential(context.Context) (credential, error) { return s, nil }
func (s static) apply(req *http.Request, _ []byte)              { s(req) }
func (s static) refused() bool                                  { return false }

// authorizedExchange sends r with the file's authentication; every
// request of the adapter goes through it. A 401 answer to a credential
// that can be renewed (a token) drops it; a read is then sent once more
// with a fresh one, a write never: its bytes left, so it may have been
// applied, and it stays unknown (adapter.Unknowable) for Lookup and a
// person to settle, whatever the file's error rules say of a 401.
func (a *Adapter) authorizedExchange(ctx context.Context, r adapter.Request) (int, []byte, error) {
	prepare := r.Prepare
	for attempt := 0; ; attempt++ {
		cred, err := a.auth.credential(ctx)
		if err != nil {
			return 0, nil, err
		}
		r.Prepare = func(req *http.Request) {
			if prepare != nil {
				prepare(req)
			}
			cred.apply(req, r.Body)
		}
		status, raw, err := adapter.Exchange(ctx, a.http, a.name, r)
		if err != nil || status != http.StatusUnauthorized || !cred.refused() {
			return status, raw, err
		}
		a.log.WarnContext(ctx, "httpadapter: the system refused its access token; a new one is fetched",
			"system", a.name, "method", r.Method, "path", r.Path, "write", r.Write)
		if r.Write {
			return 0, nil, adapter.Unknowable(&tokenRefusedError{method: r.Method, path: r.Path})
		}
		if attempt > 0 {
			return status, raw, nil
		}
	}
}

// tokenRefusedError is a write answered 401 because its token was no
// longer good: the request left, so it is never sent again.
type tokenRefusedError struct{ method, path string }

func (e *tokenRefusedError) Error() string {
	return fmt.Sprintf("%s %s was answered 401 after it was sent: the access token was refused; the write is not sent again", e.method, e.path)
}

// auth reads the file's authentication and the secrets it names.
func (c *compiler) auth(au Auth, cfg Config, name, base string) authorizer {
	getenv := cfg.Getenv
	switch au.Type {
	case "none", "":
		return static(func(*http.Request) {})
	case "oauth2_client_credentials", "oauth2_refresh_token":
		return c.oauth(au, cfg, name, base)
	}
	secret := getenv(au.SecretEnv)
	if secret == "" {
		c.fail("/auth/secret_env", fmt.Sprintf("the environment variable %s is not set", au.SecretEnv),
			fmt.Sprintf("set %s to the system's %s secret before starting; it is never written in the file", au.SecretEnv, au.Type))
		return nil
	}
	switch au.Type {
	case "hmac":
		return c.hmac(au, secret, cfg.Now)
	case "bearer":
		return static(func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+secret) })
	case "basic":
		v := "Basic " + base64.StdEncoding.EncodeToString([]byte(au.Username+":"+secret))
		return static(func(r *http.Request) { r.Header.Set("Authorization", v) })
	default:
		return static(func(r *http.Request) { r.Header.Set(au.Header, secret) })
	}
}

// envValue reads the environment variable the file names at ptr, failing the
// load when it is not set.
func (c *compiler) envValue(getenv func(string) string, ptr, name, what string) string {
	if name == "" {
		return ""
	}
	v := getenv(name)
	if v == "" {
		c.fail(ptr, fmt.Sprintf("the environment variable %s is not set", name),
			fmt.Sprintf("set %s to %s before starting; it is never written in the file", name, what))
	}
	return v
}
