// Package localidp runs a real OpenID Connect provider on loopback for
// the demo and for tests (internal/sso/ssotest wraps it for tests): zitadel/oidc's op package over the in-memory storage
// of its example server, with a plain login form, no consent step, the
// authorization code flow with PKCE, and users whose groups a test can
// change between sign-ins. The console never imports it; cmd/ssoprovider
// serves it for trying single sign-on by hand.
package localidp

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// Password is every test user's password.
const Password = "correct horse battery staple"

// OP is a running provider.
type OP struct {
	// URL is the issuer: discovery is at URL + "/.well-known/openid-configuration".
	URL string

	srv      *http.Server
	store    *opStorage
	callback func(context.Context, string) string
}

// Client is a registration of a relying party at the provider.
type Client struct {
	ID, Secret  string
	RedirectURL string
}

// Serve runs a provider on addr (host:port; port 0 picks one) until Close,
// for the demo as well as for tests. Its issuer is http://<address>.
func Serve(addr string) (*OP, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	issuer := "http://" + ln.Addr().String()
	users := &userStore{users: map[string]*storage.User{}, groups: map[string][]string{}}
	st := &opStorage{Storage: storage.NewStorageWithClients(users, map[string]*storage.Client{}), users: users,
		clients: map[string]Client{}}
	provider, err := op.NewProvider(&op.Config{
		CryptoKey:          sha256.Sum256([]byte("ssotest")),
		CodeMethodS256:     true,
		AuthMethodPost:     true,
		SupportedUILocales: []language.Tag{language.English},
	}, st, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("localidp: provider: %w", err)
	}
	mux := http.NewServeMux()
	o := &OP{URL: issuer, store: st, callback: op.AuthCallbackURL(provider),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	interceptor := op.NewIssuerInterceptor(provider.IssuerFromRequest)
	mux.HandleFunc("GET /login/username", o.loginForm)
	mux.Handle("POST /login/username", interceptor.HandlerFunc(o.login))
	mux.Handle("/", provider)
	go func() { _ = o.srv.Serve(ln) }()
	return o, nil
}

// Close stops the provider.
func (o *OP) Close() { _ = o.srv.Close() }

// AddClient registers a relying party (a web client with a secret).
func (o *OP) AddClient(c Client) {
	o.store.mu.Lock()
	defer o.store.mu.Unlock()
	o.store.clients[c.ID] = c
}

// AddUser adds a person who signs in as username with Password; their
// subject is "sub-" + username.
func (o *OP) AddUser(username, email, name string, groups ...string) {
	u := o.store.users
	u.mu.Lock()
	defer u.mu.Unlock()
	u.users[username] = &storage.User{ID: "sub-" + username, Username: username, Password: Password, FirstName: name,
		Email: email, EmailVerified: true, PreferredLanguage: language.English}
	u.groups["sub-"+username] = groups
}

// SetGroups changes the groups the next ID token of username lists.
func (o *OP) SetGroups(username string, groups ...string) {
	u := o.store.users
	u.mu.Lock()
	defer u.mu.Unlock()
	u.groups["sub-"+username] = groups
}

// SetNonce makes the provider put f(nonce) into the ID tokens of the
// sign-ins begun from now on, instead of the nonce the client sent (nil:
// the client's).
func (o *OP) SetNonce(f func(string) string) {
	o.store.mu.Lock()
	defer o.store.mu.Unlock()
	o.store.nonce = f
}

// SetAuthAge makes the provider's ID tokens issued from now on say the
// person authenticated age earlier than they did (auth_time), as a
// provider does that answers from a session of its own instead of asking
// again (0: when they did; below 0: the tokens carry no auth_time, as
// some providers' do not).
func (o *OP) SetAuthAge(age time.Duration) {
	o.store.mu.Lock()
	defer o.store.mu.Unlock()
	o.store.authAge = age
}

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><title>Test provider: sign in</title></head><body>
<h1>Test provider</h1>
{{if .Error}}<p role="alert" id="op-error">{{.Error}}</p>{{end}}
<form method="post" action="/login/username" id="op-login">
<input type="hidden" name="id" value="{{.ID}}">
<label>User name <input name="username" id="op-username" autocomplete="username"></label>
<label>Password <input name="password" id="op-password" type="password"></label>
<button type="submit" id="op-submit">Sign in</button>
</form></body></html>`))

func (o *OP) loginForm(w http.ResponseWriter, r *http.Request) {
	_ = loginPage.Execute(w, map[string]string{"ID": r.URL.Query().Get("authRequestID")})
}

// login checks the form and hands the request back to the provider, which
// redirects to the client with a code: there is no consent step.
func (o *OP) login(w http.ResponseWriter, r *http.Request) {
	id := r.FormValue("id")
	if err := o.store.CheckUsernamePassword(r.FormValue("username"), r.FormValue("password"), id); err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		_ = loginPage.Execute(w, map[string]string{"ID": id, "Error": err.Error()})
		return
	}
	http.Redirect(w, r, o.callback(r.Context(), id), http.StatusFound)
}

// userStore is the example storage's user lookup over users a test adds.
type userStore struct {
	mu     sync.Mutex
	users  map[string]*storage.User // by username
	groups map[string][]string      // by subject
}

func (u *userStore) GetUserByID(id string) *storage.User {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, user := range u.users {
		if user.ID == id {
			return user
		}
	}
	return nil
}

func (u *userStore) GetUserByUsername(username string) *storage.User {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.users[username]
}

func (u *userStore) ExampleClientID() string { return "service" }

// opStorage is the example's storage with the clients, the claims and the
// nonce hook of this package.
type opStorage struct {
	*storage.Storage
	users   *userStore
	mu      sync.Mutex
	clients map[string]Client
	nonce   func(string) string
	authAge time.Duration
}

func (s *opStorage) client(id string) (Client, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	return c, ok
}

// GetClientByClientID answers for the clients a test registered.
func (s *opStorage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	c, ok := s.client(id)
	if !ok {
		return nil, errors.New("client not found")
	}
	return storage.WebClient(c.ID, c.Secret, c.RedirectURL), nil
}

// AuthorizeClientIDSecret checks a registered client's secret.
func (s *opStorage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	if c, ok := s.client(id); !ok || c.Secret != secret {
		return errors.New("invalid client")
	}
	return nil
}

// CreateAuthRequest stores the request, with the nonce the hook makes.
func (s *opStorage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, userID string) (op.AuthRequest, error) {
	s.mu.Lock()
	f := s.nonce
	s.mu.Unlock()
	if f != nil {
		changed := *req
		changed.Nonce = f(req.Nonce)
		req = &changed
	}
	return s.Storage.CreateAuthRequest(ctx, req, userID)
}

// AuthRequestByCode is the example's, with the auth_time SetAuthAge asks.
func (s *opStorage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	req, err := s.Storage.AuthRequestByCode(ctx, code)
	s.mu.Lock()
	age := s.authAge
	s.mu.Unlock()
	if err != nil || age == 0 {
		return req, err
	}
	if age < 0 {
		return agedRequest{AuthRequest: req}, nil
	}
	return agedRequest{AuthRequest: req, at: req.GetAuthTime().Add(-age)}, nil
}

// agedRequest is an auth request whose person authenticated at at.
type agedRequest struct {
	op.AuthRequest
	at time.Time
}

func (r agedRequest) GetAuthTime() time.Time { return r.at }

// SetUserinfoFromScopes puts the e-mail, the name and the groups into every
// ID token, as providers configured for the console do.
func (s *opStorage) SetUserinfoFromScopes(_ context.Context, info *oidc.UserInfo, userID, _ string, _ []string) error {
	user := s.users.GetUserByID(userID)
	if user == nil {
		return errors.New("user not found")
	}
	s.users.mu.Lock()
	groups := slices.Clone(s.users.groups[userID])
	s.users.mu.Unlock()
	info.Subject = user.ID
	info.Email, info.EmailVerified = user.Email, oidc.Bool(user.EmailVerified)
	info.Name = user.FirstName
	info.AppendClaims("groups", groups)
	return nil
}
