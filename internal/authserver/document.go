package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"countersign/internal/safehttp"
	"countersign/store"
)

// maxDocument bounds a Client ID Metadata Document's size.
const maxDocument = 5 << 10

// metadataDocument is what this server reads of a Client ID Metadata
// Document.
type metadataDocument struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ClientSecret            string   `json:"client_secret"`
}

// documentClient returns the client of a metadata document URL, fetching
// it when the kept copy is missing or stale.
func (s *Service) documentClient(ctx context.Context, id string) (Client, error) {
	row, err := s.store.OAuthClient(ctx, id)
	switch {
	case err == nil && row.FetchedAt != nil && s.now().Sub(*row.FetchedAt) < DocumentFreshFor:
		return clientFromRow(row), nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return Client{}, err
	}
	doc, name, raw, ferr := s.fetchDocument(ctx, id)
	if ferr != nil {
		return Client{}, ferr
	}
	now := s.now()
	row, err = s.store.SaveOAuthClientDocument(ctx, store.OAuthClient{ID: id, Name: name, RedirectURIs: doc.RedirectURIs,
		Document: raw, CreatedAt: now, FetchedAt: &now})
	if err != nil {
		return Client{}, err
	}
	return clientFromRow(row), nil
}

// fetchDocument fetches and checks the metadata document at id: an https
// URL with a path, no fragment, credentials or dot segments, answering
// 200 with at most maxDocument bytes of JSON whose client_id is id
// exactly, whose redirect URIs are safe, and which asks for no client
// secret.
func (s *Service) fetchDocument(ctx context.Context, id string) (metadataDocument, string, json.RawMessage, error) {
	refuse := func(format string, args ...any) (metadataDocument, string, json.RawMessage, error) {
		return metadataDocument{}, "", nil, oauthErr(http.StatusBadRequest, "invalid_client",
			"The client's metadata document at "+id+" "+fmt.Sprintf(format, args...))
	}
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" || strings.Contains(id, "#") ||
		u.Path == "" || u.Path == "/" || strings.Contains(u.Path, "/./") || strings.Contains(u.Path, "/../") || len(id) > 2000 {
		return refuse("is not an https URL with a path (and without a fragment, credentials or dot segments).")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return refuse("cannot be requested.")
	}
	req.Header.Set("Accept", "application/json")
	// Anyone may name a document at the token endpoint: a failure is told
	// in the console's words, never the network's (the address a name
	// resolved to, the dialer's message), which would map what names
	// resolve to inside.
	resp, err := s.fetch.Do(req)
	if refused := (*safehttp.RefusedError)(nil); errors.As(err, &refused) {
		return refuse("is not at a public https address; the console fetches documents from the internet only.")
	}
	if err != nil {
		return refuse("could not be fetched: the connection failed or did not answer in time.")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return refuse("answered %d, not 200.", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return refuse("could not be read to its end.")
	}
	if len(body) > maxDocument {
		return refuse("is larger than %d bytes.", maxDocument)
	}
	var doc metadataDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		return refuse("is not a JSON object.")
	}
	if doc.ClientID != id {
		return refuse("names another client_id (%q); it must be the document's own URL.", doc.ClientID)
	}
	if doc.ClientSecret != "" || (doc.TokenEndpointAuthMethod != "" && doc.TokenEndpointAuthMethod != "none") {
		return refuse("asks for client authentication; this server takes public clients only (token_endpoint_auth_method \"none\").")
	}
	if why := redirectProblem(doc.RedirectURIs); why != "" {
		return refuse("is not usable: %s", why)
	}
	name, err := clientName(doc.ClientName, "https://"+u.Host)
	if err != nil {
		return refuse("has an unusable client_name.")
	}
	return doc, name, body, nil
}
