package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"

	"countersign/internal/receiptcheck"
)

const receiptsUsage = `countersign receipts verify -jwks FILE|URL [-audit-key KEY|FILE|URL] RECEIPT_FILE|-

Checks a signed receipt (docs/api.md, "Signed receipts") offline against a
key set: the JWKS file, or the console's GET /api/v1/receipts/jwks.json.
RECEIPT_FILE (- for standard input) holds the compact JWS, or the JSON
answer of GET /api/v1/invocations/{id}/receipt. Only EdDSA signatures of a
key of the set with the header's kid are accepted. The staff approvals
it carries are checked too: each passkey assertion must be evidence of
its approval (the receipt's invocation, the version and the arguments'
hash approved), and the arguments must hash to what was approved. So is
the customer's consent: the quote it carries must hash to the digest the
customer was shown, have been made from the arguments sent (their hash)
for the receipt's target, and a customer's passkey assertion must be
evidence of that decision on that quote; args_digest must be the
arguments' hash. It says who said yes, how, and to what. With
-audit-key (the trail's verifier key, a file holding it, or the console's
GET /audit/key), the receipt's trail proof is checked too: its checkpoint
must be signed by that key and every leaf of the write must be in it
(internal/audit/README.md, "Receipts"). It
prints what the receipt says; exit status 0 when every check holds, 1
with the reason when one does not, 2 when the files cannot be read.
`

// runReceipts is `countersign receipts`.
func runReceipts(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprint(stderr, receiptsUsage)
		return 2
	}
	fs := flag.NewFlagSet("receipts verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, receiptsUsage+"\nFlags:\n"); fs.PrintDefaults() }
	jwksFrom := fs.String("jwks", "", "the key set: a JWKS file, or an http(s) URL such as https://console.example/api/v1/receipts/jwks.json (required)")
	auditFrom := fs.String("audit-key", "", "the audit trail's verifier key: the key, a file holding it, or an http(s) URL such as https://console.example/audit/key")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *jwksFrom == "" || fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "receipts verify: "+format+"\n", a...)
		return 2
	}
	jwks, err := readKeySet(ctx, *jwksFrom)
	if err != nil {
		return fail("-jwks %s: %v", *jwksFrom, err)
	}
	var auditKey note.Verifier
	if *auditFrom != "" {
		if auditKey, err = readAuditKey(ctx, *auditFrom); err != nil {
			return fail("-audit-key %s: %v", *auditFrom, err)
		}
	}
	var raw []byte
	if fs.Arg(0) == "-" {
		raw, err = io.ReadAll(stdin)
	} else {
		raw, err = os.ReadFile(fs.Arg(0))
	}
	if err != nil {
		return fail("%v", err)
	}
	checked, err := receiptcheck.CheckWithTrail(raw, jwks, auditKey)
	if err != nil {
		fmt.Fprintf(stderr, "NOT VALID: %v\n", err)
		return 1
	}
	checked.Write(stdout, *jwksFrom)
	return 0
}

// maxKeySet caps a key set read from a URL.
const maxKeySet = 1 << 20

// readKeySet reads the key set from a file or a URL. A URL must be https
// (http only to a loopback address: a key set anyone on the way could
// replace proves nothing); no redirect is followed, the request has 15 s
// and the answer at most maxKeySet bytes.
func readKeySet(ctx context.Context, from string) ([]byte, error) {
	if !strings.HasPrefix(from, "http://") && !strings.HasPrefix(from, "https://") {
		return os.ReadFile(from)
	}
	body, err := fetchKey(ctx, from)
	if err != nil {
		return nil, err
	}
	if !json.Valid(body) {
		return nil, errors.New("the answer is not JSON")
	}
	return body, nil
}

// readAuditKey reads the trail's verifier key: the key itself
// (name+hash+base64), a file holding it, or a URL answered as a key set's.
func readAuditKey(ctx context.Context, from string) (note.Verifier, error) {
	text := []byte(from)
	var err error
	switch {
	case strings.HasPrefix(from, "http://") || strings.HasPrefix(from, "https://"):
		text, err = fetchKey(ctx, from)
	case !isVerifierKey(from):
		// Not a key as given (its base64 may hold any number of "+"),
		// so the name of a file holding one.
		text, err = os.ReadFile(from)
	}
	if err != nil {
		return nil, err
	}
	v, err := note.NewVerifier(strings.TrimSpace(string(text)))
	if err != nil {
		return nil, errors.New("not a verifier key (name+hash+base64, as GET /audit/key answers)")
	}
	return v, nil
}

// isVerifierKey reports whether s is a verifier key itself.
func isVerifierKey(s string) bool {
	_, err := note.NewVerifier(strings.TrimSpace(s))
	return err == nil
}

// fetchKey reads a key (set) from a URL, under readKeySet's rules.
func fetchKey(ctx context.Context, from string) ([]byte, error) {
	u, err := url.Parse(from)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "http" && !loopback(net.JoinHostPort(u.Hostname(), "0")) {
		return nil, errors.New("an http:// key set could be replaced on the way; use https:// (http:// only to localhost)")
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, from, nil)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Timeout: 15 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return nil, fmt.Errorf("answered %s, a redirect to %q, which is not followed", resp.Status, resp.Header.Get("Location"))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeySet+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxKeySet {
		return nil, fmt.Errorf("the key set is larger than %d bytes", maxKeySet)
	}
	return body, nil
}
