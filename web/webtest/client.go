package webtest

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// Client is a browser-like HTTP client with its own cookie jar that does not
// follow redirects, so tests see each 303. Its methods fail the test on a
// transport error.
type Client struct {
	T     *testing.T
	Stack *Stack
	// HTTP is the client underneath, with the cookie jar.
	HTTP *http.Client
	// Header is added to every request (e.g. X-Forwarded-For).
	Header http.Header
}

// Client returns a new browser (no cookies yet) for the stack's server.
func (s *Stack) Client(t *testing.T) *Client {
	jar, _ := cookiejar.New(nil)
	return &Client{T: t, Stack: s, Header: http.Header{}, HTTP: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Response is an answer with its body read into Text.
type Response struct {
	*http.Response
	Text string
}

// Doc parses the body as HTML.
func (r Response) Doc(t *testing.T) *goquery.Document {
	t.Helper()
	d, err := goquery.NewDocumentFromReader(strings.NewReader(r.Text))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Do sends req with the client's cookies and Header and reads the answer.
func (c *Client) Do(req *http.Request) Response {
	c.T.Helper()
	for k, v := range c.Header {
		req.Header[k] = v
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return Response{Response: res, Text: string(b)}
}

// Get opens path on the stack's server.
func (c *Client) Get(path string) Response {
	c.T.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.Stack.Server.URL+path, nil)
	return c.Do(req)
}

// Post sends a form as a same-origin browser would.
func (c *Client) Post(path string, form url.Values) Response {
	c.T.Helper()
	form = c.withQuoteShown(path, form)
	req, _ := http.NewRequest(http.MethodPost, c.Stack.Server.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.Stack.Server.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return c.Do(req)
}

// decisionPath is a customer's decision form's action.
var decisionPath = regexp.MustCompile(`^/requests/([^/?]+)/(confirm|decline)$`)

// withQuoteShown adds to a customer's decision the quote its page shows
// now (the hidden quote_version and quote_digest a browser submits with
// the form), unless form names one already: a test of a decision on
// another quote names it.
func (c *Client) withQuoteShown(path string, form url.Values) url.Values {
	m := decisionPath.FindStringSubmatch(path)
	if m == nil || form.Has("quote_version") {
		return form
	}
	out := url.Values{}
	for k, v := range form {
		out[k] = v
	}
	for k, v := range c.QuoteShown(m[1]) {
		out[k] = v
	}
	return out
}

// QuoteShown is the quote the page of request id shows now, as its
// decision forms post it; empty when the page offers no decision.
func (c *Client) QuoteShown(id string) url.Values {
	c.T.Helper()
	out := url.Values{}
	res := c.Get("/requests/" + id)
	if res.StatusCode != http.StatusOK {
		return out
	}
	form := res.Doc(c.T).Find(`form[action$="/decline"]`)
	for _, name := range []string{"quote_version", "quote_digest"} {
		if v, ok := form.Find(`input[name="` + name + `"]`).Attr("value"); ok {
			out.Set(name, v)
		}
	}
	return out
}

// CSRF opens path and returns the CSRF token of its first form.
func (c *Client) CSRF(path string) string {
	c.T.Helper()
	res := c.Get(path)
	tok, ok := res.Doc(c.T).Find(`input[name="_csrf"]`).Attr("value")
	if !ok || tok == "" {
		c.T.Fatalf("no CSRF token on %s (status %d)", path, res.StatusCode)
	}
	return tok
}

// SignIn posts the sign-in form as u and returns the answer, whatever it is.
func (c *Client) SignIn(u User) Response {
	c.T.Helper()
	return c.Post("/sign-in", url.Values{"_csrf": {c.CSRF("/sign-in")}, "email": {u.Email}, "password": {u.Password}})
}

// MustSignIn signs in as u and fails the test unless the server answers
// with the 303 of a signed-in browser.
func (c *Client) MustSignIn(u User) {
	c.T.Helper()
	if res := c.SignIn(u); res.StatusCode != http.StatusSeeOther {
		c.T.Fatalf("sign in as %s: status %d, want 303\n%s", u.Role, res.StatusCode, res.Text)
	}
}

// SessionCookie returns the session cookie the jar holds for the server.
func (c *Client) SessionCookie() *http.Cookie {
	u, _ := url.Parse(c.Stack.Server.URL)
	for _, ck := range c.HTTP.Jar.Cookies(u) {
		if ck.Name == "cs_session" {
			return ck
		}
	}
	return nil
}
