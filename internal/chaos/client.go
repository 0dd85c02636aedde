package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// apiClient is the assistant: the JSON API with its bearer key.
type apiClient struct {
	key  string
	http *http.Client
}

func newAPIClient(key string) *apiClient {
	return &apiClient{key: key, http: &http.Client{Timeout: 15 * time.Second}}
}

// do sends one API request to base and decodes a JSON answer into out; it
// returns the status (0 when no answer came).
func (a *apiClient) do(ctx context.Context, base, method, path string, body any, idemKey string, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+"/api/v1"+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	req.Header.Set("Content-Type", "application/json")
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	res, err := a.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, err
	}
	if res.StatusCode/100 == 2 && out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return res.StatusCode, fmt.Errorf("decode %s %s: %w", method, path, err)
		}
	}
	if res.StatusCode/100 != 2 {
		var e struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(b, &e)
		return res.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, e.Code)
	}
	return res.StatusCode, nil
}

// apiInvocation and apiTask are the fields of the API's answers the driver reads.
type apiInvocation struct {
	ID             string `json:"id"`
	TaskID         string `json:"task_id"`
	State          string `json:"state"`
	Version        int32  `json:"version"`
	IdempotencyKey string `json:"idempotency_key"`
	Deduplicated   bool   `json:"deduplicated"`
}

type apiTask struct {
	ID      string `json:"id"`
	State   string `json:"state"`
	Version int32  `json:"version"`
}

// webClient is a person signed in to the console's pages. Sessions live in
// the shared database, and cookies ignore the port, so one sign-in works
// on every console instance.
type webClient struct {
	email string
	http  *http.Client
}

var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

func newWebClient(email string) *webClient {
	jar, _ := cookiejar.New(nil)
	return &webClient{email: email, http: &http.Client{Jar: jar, Timeout: 15 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// get fetches a page; it returns the status and the body.
func (w *webClient) get(ctx context.Context, base, path string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return 0, "", err
	}
	res, err := w.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

// post sends a form; it returns the status and the Location.
func (w *webClient) post(ctx context.Context, base, path string, form url.Values) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := w.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode, res.Header.Get("Location"), nil
}

// signIn signs in on base with the campaign's password.
func (w *webClient) signIn(ctx context.Context, base string) error {
	status, page, err := w.get(ctx, base, "/sign-in")
	if err != nil {
		return err
	}
	tok := csrfField.FindStringSubmatch(page)
	if status != http.StatusOK || tok == nil {
		return fmt.Errorf("sign-in page: %d, token %v", status, tok != nil)
	}
	status, loc, err := w.post(ctx, base, "/sign-in", url.Values{"_csrf": {tok[1]}, "email": {w.email}, "password": {password}})
	if err != nil {
		return err
	}
	if status != http.StatusSeeOther || strings.HasPrefix(loc, "/sign-in") {
		return fmt.Errorf("sign-in as %s: %d to %q", w.email, status, loc)
	}
	return nil
}

// field returns the value of the hidden input name in page.
func field(page, name string) string {
	m := regexp.MustCompile(`name="` + regexp.QuoteMeta(name) + `" value="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return m[1]
}
