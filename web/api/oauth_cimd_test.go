package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/web/webtest"
)

// documentServer serves Client ID Metadata Documents over TLS: /good.json
// names itself, /liar.json names another client_id, /big.json is over
// the size limit. fetches counts the requests.
func documentServer(t *testing.T, fetches *atomic.Int32) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		doc := map[string]any{"client_id": srv.URL + r.URL.Path, "client_name": "Hosted Assistant",
			"redirect_uris": []string{"https://assistant.example/oauth/callback", testRedirect}, "token_endpoint_auth_method": "none"}
		switch r.URL.Path {
		case "/liar.json":
			doc["client_id"] = "https://someone-else.example/client.json"
		case "/big.json":
			doc["client_name"] = strings.Repeat("x", 6000)
		case "/good.json":
		default:
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAClientKnownByItsMetadataDocument: a client_id that is an https URL
// is fetched (with the safe client, once while fresh), shown by its name
// and its document's host, and gets tokens like a registered client; a
// document that names another client_id, is too large or is missing is
// refused on a page, with no redirect.
func TestAClientKnownByItsMetadataDocument(t *testing.T) {
	t.Parallel()
	var fetches atomic.Int32
	docs := documentServer(t, &fetches)
	b := webtest.New(t, webtest.WithClientDocuments(docs))
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	id := docs.URL + "/good.json"
	verifier, challenge := webtest.PKCE()
	q := b.AuthorizeQuery(id, testRedirect, challenge)
	page := c.Get("/oauth/authorize?" + q.Encode())
	if page.StatusCode != http.StatusOK {
		t.Fatalf("consent page: %d %s", page.StatusCode, page.Text)
	}
	doc := page.Doc(t)
	host := strings.TrimPrefix(docs.URL, "https://")
	if got := doc.Find(`[data-testid="oauth-client-name"]`).Text(); !strings.Contains(got, "Hosted Assistant") {
		t.Errorf("client name shown: %q", got)
	}
	if !strings.Contains(doc.Find(`[data-testid="oauth-client"]`).Text(), "metadata document at "+host) {
		t.Errorf("the page does not say the document's host: %q", doc.Find(`[data-testid="oauth-client"]`).Text())
	}
	code := c.Consent(q, "self", "allow").Query().Get("code")
	tok := exchange(t, b, id, code, testRedirect, verifier).Want(t, http.StatusOK)
	if s := mcpStatus(t, b, b.Server.URL, tok.JSON["access_token"].(string)); s != http.StatusOK {
		t.Errorf("the document client's token on /mcp: %d", s)
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("the document was fetched %d times while fresh, want 1", n)
	}
	for _, path := range []string{"/liar.json", "/big.json", "/missing.json"} {
		res := c.Get("/oauth/authorize?" + b.AuthorizeQuery(docs.URL+path, testRedirect, challenge).Encode())
		if res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" ||
			res.Doc(t).Find(`[data-testid="oauth-refused"]`).Length() != 1 {
			t.Errorf("%s: %d, Location %q", path, res.StatusCode, res.Header.Get("Location"))
		}
	}
	// The production client reaches no address but the test's server.
	res := c.Get("/oauth/authorize?" + b.AuthorizeQuery("https://127.0.0.1:1/client.json", testRedirect, challenge).Encode())
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("a document on a refused address: %d", res.StatusCode)
	}
}

// TestAnAdminRevokesADocumentClientWhoseDocumentIsGone: revoking a client
// reads what the console kept of it; it fetches nothing, so a client whose
// metadata document can no longer be fetched (its site down or taken
// away, the moment an admin wants it gone) is revoked all the same, and
// its tokens stop.
func TestAnAdminRevokesADocumentClientWhoseDocumentIsGone(t *testing.T) {
	t.Parallel()
	var fetches atomic.Int32
	docs := documentServer(t, &fetches)
	b := webtest.New(t, webtest.WithClientDocuments(docs))
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	id := docs.URL + "/good.json"
	verifier, challenge := webtest.PKCE()
	q := b.AuthorizeQuery(id, testRedirect, challenge)
	code := c.Consent(q, "self", "allow").Query().Get("code")
	access := exchange(t, b, id, code, testRedirect, verifier).Want(t, http.StatusOK).JSON["access_token"].(string)
	docs.Close()
	b.Clock.Advance(2 * time.Hour)
	admin := b.Client(t)
	admin.MustSignIn(b.Users[accounts.Admin])
	form := url.Values{"_csrf": {admin.CSRF("/admin/clients")}, "client_id": {id}}
	if res := admin.Post("/admin/clients/revoke", form); res.StatusCode != http.StatusOK {
		t.Fatalf("revoke without confirm, the document gone: %d %s, want the confirmation page", res.StatusCode, res.Text)
	}
	form.Set("confirm", "yes")
	if res := admin.Post("/admin/clients/revoke", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke, the document gone: %d %s, want 303", res.StatusCode, res.Text)
	}
	if s := mcpStatus(t, b, b.Server.URL, access); s != http.StatusUnauthorized {
		t.Errorf("the revoked client's token on /mcp: %d, want 401", s)
	}
}

// TestADocumentFetchThatFailsSaysNoMoreThanThat: anyone may name a
// metadata document URL at the token endpoint; when it cannot be
// fetched, the answer says so in the console's words, never the
// network's (no address it resolved to, no dialer or library message),
// so the endpoint does not tell a caller what names resolve to inside.
func TestADocumentFetchThatFailsSaysNoMoreThanThat(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	res := b.OAuthPost(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"cso_rt_x"},
		"client_id": {"https://127.0.0.1:1/client.json"}})
	desc, _ := res.JSON["error_description"].(string)
	if res.JSON["error"] != "invalid_client" || desc == "" {
		t.Fatalf("an unfetchable document: %d %s, want invalid_client with a description", res.Status, res.Body)
	}
	for _, leak := range []string{"127.0.0.1:", "refused to connect", "safehttp", "dial", "Get \""} {
		if strings.Contains(strings.ReplaceAll(desc, "https://127.0.0.1:1/client.json", ""), leak) {
			t.Errorf("the refusal tells the network's words (%q): %s", leak, desc)
		}
	}
}
