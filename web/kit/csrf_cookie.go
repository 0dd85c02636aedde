package kit

import (
	"crypto/subtle"
	"net/http"

	"github.com/gorilla/securecookie"
)

// A visitor without a session (the sign-in page) gets the CSRF token of its
// forms in a cookie of its own instead of a session row, so that bots
// fetching the sign-in page store nothing: a double-submit token, signed
// and encrypted with the session keys so it cannot be made up. Over HTTPS
// the cookie carries the __Host- prefix, which a sibling subdomain cannot
// set; Go's cross-origin check still runs before any token is looked at.
const csrfCookie = "cs_csrf"

func (s *SessionStore) csrfCookieName() string {
	if s.options.Secure {
		return "__Host-" + csrfCookie
	}
	return csrfCookie
}

// anonymousToken is the token of the request's CSRF cookie, if it has a
// genuine one.
func (s *SessionStore) anonymousToken(r *http.Request) (string, bool) {
	ck, err := r.Cookie(s.csrfCookieName())
	if err != nil {
		return "", false
	}
	var tok string
	if err := securecookie.DecodeMulti(csrfCookie, ck.Value, &tok, s.codecs...); err != nil || tok == "" {
		return "", false
	}
	return tok, true
}

// anonymousCSRF returns the token for an anonymous visitor's forms: the
// one in their CSRF cookie, or a new one in a new cookie.
func (s *SessionStore) anonymousCSRF(r *http.Request, w http.ResponseWriter) (string, error) {
	if tok, ok := s.anonymousToken(r); ok {
		return tok, nil
	}
	tok := randomToken(32)
	encoded, err := securecookie.EncodeMulti(csrfCookie, tok, s.codecs...)
	if err != nil {
		return "", err
	}
	http.SetCookie(w, s.csrfCookieOf(encoded, s.options.MaxAge))
	return tok, nil
}

// checkAnonymousCSRF reports whether got is the token of the request's
// CSRF cookie.
func (s *SessionStore) checkAnonymousCSRF(r *http.Request, got string) bool {
	want, ok := s.anonymousToken(r)
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// DropAnonymousCSRF deletes the CSRF cookie once the visitor has a session.
func (s *SessionStore) DropAnonymousCSRF(r *http.Request, w http.ResponseWriter) {
	if _, err := r.Cookie(s.csrfCookieName()); err == nil {
		http.SetCookie(w, s.csrfCookieOf("", -1))
	}
}

func (s *SessionStore) csrfCookieOf(value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: s.csrfCookieName(), Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		Secure: s.options.Secure, SameSite: http.SameSiteStrictMode}
}
