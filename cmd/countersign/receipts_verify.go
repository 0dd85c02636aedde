package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"countersign/internal/money"
	"countersign/internal/receipts"
)

const receiptsUsage = `countersign receipts verify -jwks FILE|URL RECEIPT_FILE|-

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
arguments' hash. It says who said yes, how, and to what. It
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
	var raw []byte
	if fs.Arg(0) == "-" {
		raw, err = io.ReadAll(stdin)
	} else {
		raw, err = os.ReadFile(fs.Arg(0))
	}
	if err != nil {
		return fail("%v", err)
	}
	header, claims, err := receipts.VerifyWithKeys(receiptJWS(raw), jwks)
	if err != nil {
		fmt.Fprintf(stderr, "NOT VALID: %s\n", strings.TrimPrefix(err.Error(), "receipts: "))
		return 1
	}
	approvals, err := checkApprovals(claims)
	if err != nil {
		fmt.Fprintf(stderr, "NOT VALID: signed with key %s, but %v\n", header.Kid, err)
		return 1
	}
	consented, err := checkConsent(claims)
	if err != nil {
		fmt.Fprintf(stderr, "NOT VALID: signed with key %s, but %v\n", header.Kid, err)
		return 1
	}
	fmt.Fprintf(stdout, "VALID: signed with EdDSA by key %s of %s\n", header.Kid, *jwksFrom)
	describeReceipt(stdout, claims)
	for _, line := range approvals {
		fmt.Fprintf(stdout, "%-13s %s\n", "Approval:", line)
	}
	for _, line := range consented {
		fmt.Fprintf(stdout, "%-13s %s\n", "Consent:", line)
	}
	return 0
}

// receiptJWS is the JWS of a receipt file: the file itself, or the
// "receipt" of GET /api/v1/invocations/{id}/receipt's answer.
func receiptJWS(raw []byte) string {
	var answer struct {
		Receipt string `json:"receipt"`
	}
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' && json.Unmarshal(t, &answer) == nil && answer.Receipt != "" {
		return answer.Receipt
	}
	return string(bytes.TrimSpace(raw))
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
	if !json.Valid(body) {
		return nil, errors.New("the answer is not JSON")
	}
	return body, nil
}

// receiptClaims is what describeReceipt reads of a receipt's claims
// (web/api's receiptClaims, as JSON).
type receiptClaims struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	IssuedAt int64  `json:"iat"`
	TaskID   string `json:"task_id"`
	System   string `json:"system"`
	Action   string `json:"action"`
	State    string `json:"state"`
	Target   struct {
		Kind, ID, Display string
	} `json:"target"`
	Args   map[string]json.RawMessage `json:"args"`
	Result *struct {
		Reference      string `json:"reference"`
		ShortReference string `json:"short_reference"`
		AmountCents    *int64 `json:"amount_cents"`
		Currency       string `json:"currency"`
	} `json:"result"`
	Verification *struct {
		Verified bool      `json:"verified"`
		Evidence string    `json:"evidence"`
		At       time.Time `json:"at"`
	} `json:"verification"`
	CompletedAt *time.Time `json:"completed_at"`
}

// describeReceipt prints the claims in words, one fact a line.
func describeReceipt(w io.Writer, raw json.RawMessage) {
	var c receiptClaims
	if err := json.Unmarshal(raw, &c); err != nil {
		fmt.Fprintf(w, "claims (not a Countersign receipt's): %s\n", raw)
		return
	}
	line := func(label, format string, a ...any) {
		fmt.Fprintf(w, "%-13s %s\n", label+":", fmt.Sprintf(format, a...))
	}
	line("Invocation", "%s (task %s)", c.Subject, c.TaskID)
	line("System", "%s, action %s", c.System, c.Action)
	line("Target", "%s (%s %s)", c.Target.Display, c.Target.Kind, c.Target.ID)
	var changed []string
	for _, k := range slices.Sorted(maps.Keys(c.Args)) {
		changed = append(changed, k+" = "+string(c.Args[k]))
	}
	line("What changed", "%s", orNone(strings.Join(changed, ", ")))
	state := c.State
	if state == "reversed" {
		state += " (a compensation undid it since)"
	}
	// A receipt is signed once: it says the state when it was issued,
	// and a reversal made since does not change one already handed out.
	line("State", "%s, as of %s (a later reversal is not in this receipt: GET /api/v1/invocations/%s gives the state now)",
		state, time.Unix(c.IssuedAt, 0).UTC().Format(time.RFC3339), c.Subject)
	if c.Result != nil {
		ref := c.Result.Reference
		if c.Result.ShortReference != "" && c.Result.ShortReference != ref {
			ref += " (the customer's: " + c.Result.ShortReference + ")"
		}
		line("Reference", "%s", orNone(ref))
		if a := c.Result.AmountCents; a != nil {
			line("Amount", "%s (as the system recorded it)", money.Format(*a, c.Result.Currency))
		}
	}
	if v := c.Verification; v != nil {
		line("Verified at", "%s: %s", v.At.UTC().Format(time.RFC3339), v.Evidence)
	} else {
		line("Verified at", "none")
	}
	if c.CompletedAt != nil {
		line("Completed at", "%s", c.CompletedAt.UTC().Format(time.RFC3339))
	}
	line("Issued", "by %s at %s", orNone(c.Issuer), time.Unix(c.IssuedAt, 0).UTC().Format(time.RFC3339))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
