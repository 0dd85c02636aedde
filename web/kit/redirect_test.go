package kit_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"countersign/web/webtest"

	"countersign/internal/accounts"
)

// nextCases are raw query values of ?next= as an attacker would write them
// in a link, with where the sign-in must send the browser afterwards. A
// NUL byte or invalid UTF-8 is refused outright (400, no redirect at all)
// before any handler runs; see refusedText.
var nextCases = []struct{ raw, want string }{
	// Hostile: every one falls back to the home page.
	{"/%09/evil.example", "/"},                    // the reported one: browsers drop the tab
	{"//evil.example", "/"},                       // protocol-relative
	{"///evil.example", "/"},                      //
	{"/%5Cevil.example", "/"},                     // "/\evil.example": browsers read \ as /
	{"%5C%5Cevil.example", "/"},                   // "\\evil.example"
	{"/%5C/evil.example", "/"},                    //
	{"%09/evil.example", "/"},                     // leading tab
	{"/%0A/evil.example", "/"},                    // LF
	{"/%0D%0A/evil.example", "/"},                 // CR LF (header splitting too)
	{"/%0D/evil.example", "/"},                    // CR
	{"/%00/evil.example", "/"},                    // NUL
	{"/%7F/evil.example", "/"},                    // DEL
	{"/%E2%80%8B/evil.example", "/"},              // zero-width space, invisible
	{"/%E2%80%AE/evil.example", "/"},              // right-to-left override
	{"https://evil.example", "/"},                 // absolute URL
	{"HTTPS:%2F%2Fevil.example", "/"},             //
	{"https:evil.example", "/"},                   //
	{"javascript:alert(1)", "/"},                  //
	{"JaVaScRiPt%3Aalert(document.cookie)", "/"},  //
	{"data:text/html,hi", "/"},                    //
	{"/%2F%2Fevil.example", "/"},                  // the server sees "///evil.example"
	{"/%252F%252Fevil.example", "/"},              // the server sees "/%2F%2F…", "///…" once decoded
	{"/%255Cevil.example", "/"},                   // "/%5Cevil.example": a backslash once decoded
	{"/%2509/evil.example", "/"},                  // "/%09/…": a tab once decoded
	{"%20/evil.example", "/"},                     // leading space
	{"evil.example", "/"},                         // not a path
	{"/%FF/evil.example", "/"},                    // not UTF-8
	{"", "/"},                                     //
	{"/sign-in%3Fnext%3D%2F%2Fevil.example", "/"}, // back to the sign-in page
	// Local paths survive as they are.
	{"/tasks/t_123", "/tasks/t_123"},
	{"/queue%3Fq%3Dhello%2520world%26page%3D2", "/queue?q=hello%20world&page=2"},
	{"/@evil.example", "/@evil.example"}, // a path on this site, however it looks
	{"/metrics%23top", "/metrics#top"},
}

// TestSignInNextStaysOnSite checks every place that takes ?next=: the
// form's hidden field, the redirect after signing in, and the redirect of a
// visitor who is already signed in.
func TestSignInNextStaysOnSite(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	u := b.Users[accounts.Agent]
	signedIn := b.Client(t)
	signedIn.MustSignIn(u)
	for _, tc := range nextCases {
		c := b.Client(t)
		form := c.Get("/sign-in?next=" + tc.raw)
		hidden, _ := form.Doc(t).Find(`input[name="next"]`).Attr("value")
		refused := refusedText(tc.raw)
		if refused && form.StatusCode != http.StatusBadRequest {
			t.Errorf("next=%s: the form answers %d, want 400", tc.raw, form.StatusCode)
		}
		if !refused && hidden != tc.want {
			t.Errorf("next=%s: the form keeps %q, want %q", tc.raw, hidden, tc.want)
		}
		// The form as posted by a page that kept the attacker's value.
		decoded, err := url.QueryUnescape(tc.raw)
		if err != nil {
			t.Fatalf("bad case %q: %v", tc.raw, err)
		}
		form2 := url.Values{"_csrf": {c.CSRF("/sign-in")}, "email": {u.Email}, "password": {u.Password}, "next": {decoded}}
		req, _ := http.NewRequest(http.MethodPost, b.Server.URL+"/sign-in", strings.NewReader(form2.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", b.Server.URL)
		if status, loc := roundTrip(c, req); !redirectsTo(status, loc, tc.want, refused) {
			t.Errorf("next=%s: sign-in answers %d to %q, want 303 to %q", tc.raw, status, loc, tc.want)
		}
		req, _ = http.NewRequest(http.MethodGet, b.Server.URL+"/sign-in?next="+tc.raw, nil)
		if status, loc := roundTrip(signedIn, req); !redirectsTo(status, loc, tc.want, refused) {
			t.Errorf("next=%s, signed in: %d to %q, want 303 to %q", tc.raw, status, loc, tc.want)
		}
	}
}

// refusedText says whether raw (a query value as written in a link)
// decodes to text the input guard refuses: a NUL byte or invalid UTF-8.
func refusedText(raw string) bool {
	decoded, _ := url.QueryUnescape(raw)
	return strings.ContainsRune(decoded, 0) || !utf8.ValidString(decoded)
}

// redirectsTo says a response went to want, or, for refused text, was
// answered 400 without going anywhere.
func redirectsTo(status int, loc, want string, refused bool) bool {
	if refused {
		return status == http.StatusBadRequest && loc == ""
	}
	return status == http.StatusSeeOther && loc == want
}

// roundTrip sends req with the client's cookies but without http.Client,
// which refuses to read a Location holding control characters, and returns
// the status and the Location exactly as sent. A response that cannot be
// read at all (a NUL in a header) comes back as status 0 and the error.
func roundTrip(c *webtest.Client, req *http.Request) (status int, location string) {
	for _, ck := range c.HTTP.Jar.Cookies(req.URL) {
		req.AddCookie(ck)
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return 0, err.Error()
	}
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Location")
}

// TestSignInRoundTripKeepsThePage: a visitor sent to sign in lands on the
// page they asked for, query included.
func TestSignInRoundTripKeepsThePage(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	c := b.Client(t)
	res := c.Get("/tasks?state=paused&q=a%20b")
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("signed out: %d, want 303", res.StatusCode)
	}
	page := c.Get(loc)
	next, _ := page.Doc(t).Find(`input[name="next"]`).Attr("value")
	u := b.Users[accounts.Agent]
	res = c.Post("/sign-in", url.Values{"_csrf": {c.CSRF(loc)}, "email": {u.Email}, "password": {u.Password}, "next": {next}})
	if got := res.Header.Get("Location"); got != "/tasks?state=paused&q=a%20b" {
		t.Errorf("after sign-in: to %q, want back to the task list with its query", got)
	}
}

// TestGlobalStopBackStaysOnTasks: the global stop's back= goes through the
// same check as ?next=, besides having to be a task page.
func TestGlobalStopBackStaysOnTasks(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	admin := b.Client(t)
	admin.MustSignIn(b.Users[accounts.Admin])
	for _, tc := range []struct{ back, want string }{
		{"/tasks/t_1", "/tasks/t_1"},
		{"/tasks/\x00/evil.example", "/tasks"},
		{"/tasks/\r\nSet-Cookie: a=b", "/tasks"},
		{"/tasks/%2F%2E%2E%5Cevil", "/tasks"},
		{"//evil.example/tasks/", "/tasks"},
		{"https://evil.example/tasks/", "/tasks"},
	} {
		form := url.Values{"_csrf": {admin.CSRF("/tasks")}, "stopped": {"false"}, "back": {tc.back}}
		req, _ := http.NewRequest(http.MethodPost, b.Server.URL+"/controls/global-stop", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", b.Server.URL)
		if status, loc := roundTrip(admin, req); !redirectsTo(status, loc, tc.want, refusedText(url.QueryEscape(tc.back))) {
			t.Errorf("back=%q: %d to %q, want 303 to %q", tc.back, status, loc, tc.want)
		}
	}
}
