package localidp

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
)

// Login plays a person's browser at the provider without a browser: it
// follows authURL to the login form, signs in as username and returns the
// URL the provider sends the browser back to (the client's redirect URL
// with its code and state), without following it.
func (o *OP) Login(authURL, username string) (*url.URL, error) {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if !strings.HasPrefix(req.URL.String(), o.URL) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	res, err := hc.Get(authURL)
	if err != nil {
		return nil, fmt.Errorf("localidp: authorize: %w", err)
	}
	res.Body.Close()
	id := res.Request.URL.Query().Get("authRequestID")
	if res.StatusCode != http.StatusOK || id == "" {
		return nil, fmt.Errorf("localidp: authorize answered %d at %s, want the login form", res.StatusCode, res.Request.URL)
	}
	res, err = hc.PostForm(o.URL+"/login/username", url.Values{"id": {id}, "username": {username}, "password": {Password}})
	if err != nil {
		return nil, fmt.Errorf("localidp: login: %w", err)
	}
	res.Body.Close()
	loc, err := res.Location()
	if err != nil {
		return nil, fmt.Errorf("localidp: login answered %d without a redirect to the client", res.StatusCode)
	}
	return loc, nil
}
