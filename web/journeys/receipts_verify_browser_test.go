package journeys_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/consent"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/receiptcheck"
	"countersign/internal/receipts"
	"countersign/web/browsertest"
	"countersign/web/webtest"
)

// receiptKeys is the key set the console at base serves for its
// receipts, as `countersign receipts verify -jwks URL` reads it.
func receiptKeys(t *testing.T, base string) []byte {
	t.Helper()
	res, err := http.Get(base + "/api/v1/receipts/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the receipts' key set: %d, %v", res.StatusCode, err)
	}
	return raw
}

// verified runs the check of `countersign receipts verify` on receipt
// against jwks, fails the test unless it holds, and returns what the
// command prints.
func verified(t *testing.T, what string, receipt, jwks []byte) string {
	t.Helper()
	checked, err := receiptcheck.Check(receipt, jwks)
	if err != nil {
		t.Fatalf("%s: NOT VALID: %v", what, err)
	}
	var out bytes.Buffer
	checked.Write(&out, "the console's key set")
	t.Logf("%s:\n%s", what, out.String())
	if !strings.HasPrefix(out.String(), "VALID: signed with EdDSA by key ") {
		t.Fatalf("%s is told:\n%s", what, out.String())
	}
	return out.String()
}

// tampering changes a receipt's claims (decoded, numbers as written).
type tampering struct {
	name   string
	change func(t *testing.T, claims map[string]any)
	// want is how the check names it.
	want string
}

// refusesEachTampering changes receipt's claims as each tampering says.
// As served, re-signed by no one, the change breaks the signature against
// the console's key set jwks. Re-signed with a key of a set of its own, as
// one who holds the key might, the signature holds and only the checks of
// the evidence can refuse it: each must, naming the tampering.
func refusesEachTampering(t *testing.T, what string, receipt, jwks []byte, tamperings ...tampering) {
	t.Helper()
	jws := string(receipt)
	if answer := struct{ Receipt string }{}; json.Unmarshal(receipt, &answer) == nil && answer.Receipt != "" {
		jws = answer.Receipt
	}
	parts := strings.Split(strings.TrimSpace(jws), ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	signer := receipts.Ephemeral()
	ownKeys, _ := json.Marshal(signer.JWKS())
	for _, tm := range tamperings {
		dec := json.NewDecoder(bytes.NewReader(payload))
		dec.UseNumber()
		var claims map[string]any
		if err := dec.Decode(&claims); err != nil {
			t.Fatal(err)
		}
		tm.change(t, claims)
		changed, _ := json.Marshal(claims)
		asServed := parts[0] + "." + base64.RawURLEncoding.EncodeToString(changed) + "." + parts[2]
		if _, err := receiptcheck.Check([]byte(asServed), jwks); !errors.Is(err, receipts.ErrSignature) {
			t.Errorf("%s, %s, as served: %v, want the signature refused", what, tm.name, err)
		}
		resigned, err := signer.Sign(claims)
		if err != nil {
			t.Fatal(err)
		}
		_, err = receiptcheck.Check([]byte(resigned), ownKeys)
		if err == nil || !strings.Contains(err.Error(), tm.want) {
			t.Errorf("%s, %s, signed again: %v, want it refused saying %q", what, tm.name, err, tm.want)
		}
	}
}

// flipped is a base64url value with its last byte changed.
func flipped(t *testing.T, v any) string {
	t.Helper()
	s, _ := v.(string)
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) == 0 {
		t.Fatalf("not a base64url value: %v (%v)", v, err)
	}
	raw[len(raw)-1] ^= 1
	return base64.RawURLEncoding.EncodeToString(raw)
}

// claimObject is the object at the path of keys in claims.
func claimObject(t *testing.T, claims map[string]any, keys ...string) map[string]any {
	t.Helper()
	m := claims
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			t.Fatalf("the receipt has no %s", strings.Join(keys, "."))
		}
		m = next
	}
	return m
}

// moreMoney changes the amount the receipt says was refunded.
func moreMoney(_ *testing.T, claims map[string]any) {
	claims["args"].(map[string]any)["amount_cents"] = json.Number("420000")
}

// TestBrowserReceiptsVerifyWhatTheCustomerConfirmed: in Chromium, Jordan
// confirms a refund through the mail's link and adds a passkey on the page
// after it, then confirms a second refund with the passkey. Each write
// completes; its signed receipt, downloaded from the request's page as a
// customer does, passes the check of `countersign receipts verify` against
// the console's key set, which says Jordan confirmed, how (the link from
// their mailbox; their passkey, whose signature holds) and to what (the
// quote's title and amount). Each receipt with its quote digest, its
// arguments or the passkey's assertion changed is refused, naming what
// does not hold.
func TestBrowserReceiptsVerifyWhatTheCustomerConfirmed(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	console := passkeyConsole(t, b)
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go b.Control.RunDispatcher(runCtx, 50*time.Millisecond)
	ctx := browsertest.New(t, 150*time.Second)
	virtualAuthenticator(t, ctx)

	first, link := b.PendingRefund(t)
	browse(t, ctx, "the confirmation link", chromedp.Navigate(console+link), chromedp.WaitVisible(chromedp.CSS(`[data-testid="send-link"]`)))
	_, path := mailLinkFromThePage(t, ctx, b)
	browse(t, ctx, "confirm through the mail's link", chromedp.Navigate(console+path),
		chromedp.Click(chromedp.CSS(`[data-testid="mail-link-continue"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="confirm"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="add-passkey"]`)))
	// The offer came with the page htmx swapped in after the confirmation;
	// its script binds the button once loaded, long before the write is
	// done and the page shows its receipt.
	browse(t, ctx, "the receipt, then a passkey", chromedp.WaitVisible(chromedp.CSS(`[data-testid="receipt-download"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="add-passkey"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="passkey-added"]`)))
	byLink := downloadedReceipt(t, ctx, first.ID)

	second := b.ProposeFor(t, b.CustomerTask(t, webtest.Jordan), "issue_refund",
		map[string]any{"order_id": "walnut lamp", "amount_cents": 2000, "reason_code": "damaged"}, "Refund $20.00 for the lamp.")
	browse(t, ctx, "confirm with the passkey", chromedp.Navigate(console+b.Link(t, second, webtest.Jordan)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="passkey-confirm"]`)), chromedp.Click(chromedp.CSS(`[data-testid="passkey-confirm"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="my-requests-link"]`)))
	byPasskey := downloadedReceipt(t, ctx, second.ID)

	jwks := receiptKeys(t, console)
	for _, tc := range []struct {
		what    string
		receipt []byte
		says    []string
	}{
		{"the link-confirmed receipt", byLink, []string{"Invocation:   " + first.ID,
			"Consent:      " + webtest.Jordan + " confirmed with the link from their mailbox the quote: ", "$42.10",
			"hashes to the digest the customer was shown, and was made from the arguments sent"}},
		{"the passkey-confirmed receipt", byPasskey, []string{"Invocation:   " + second.ID,
			"Consent:      " + webtest.Jordan + " confirmed with their passkey the quote: ", "$20.00",
			"Consent:      the customer's passkey signed this decision on this quote: its signature holds"}},
	} {
		out := verified(t, tc.what, tc.receipt, jwks)
		for _, s := range tc.says {
			if !strings.Contains(out, s) {
				t.Errorf("%s does not say %q:\n%s", tc.what, s, out)
			}
		}
	}

	quoteDigest := tampering{"its quote digest", func(t *testing.T, c map[string]any) {
		cs := claimObject(t, c, "consent")
		cs["quote_digest"] = flipped(t, cs["quote_digest"])
	}, "the quote digest does not hold"}
	arguments := tampering{"its arguments", moreMoney, "the arguments were changed"}
	refusesEachTampering(t, "the link-confirmed receipt", byLink, jwks, quoteDigest, arguments)
	refusesEachTampering(t, "the passkey-confirmed receipt", byPasskey, jwks, quoteDigest, arguments,
		tampering{"the passkey's assertion", func(t *testing.T, c map[string]any) {
			p := claimObject(t, c, "consent", "passkey")
			p["signature"] = flipped(t, p["signature"])
		}, "the customer's passkey assertion does not hold"},
		tampering{"the decision the passkey signed", func(t *testing.T, c map[string]any) {
			claimObject(t, c, "consent")["decision"] = consent.Decline
		}, "the customer's passkey assertion does not hold"})
}

// downloadedReceipt waits on the request page open in ctx for request id
// to be done, then fetches its signed receipt from the page's "Download
// the signed file", with the browser's session, as the customer does.
func downloadedReceipt(t *testing.T, ctx context.Context, id string) []byte {
	t.Helper()
	browse(t, ctx, "the receipt of "+id, chromedp.WaitVisible(chromedp.CSS(`[data-testid="receipt-download"]`)))
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector('[data-testid="receipt-download"]').href)
		.then(r => r.text().then(t => r.status + " " + t))`, chromedp.EvalAwaitPromise))
	status, jws, _ := strings.Cut(got, " ")
	if err != nil || status != "200" {
		t.Fatalf("download the receipt of %s: %s, %v", id, got, err)
	}
	if href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="receipt-download"]').getAttribute("href")`)); href != "/requests/"+id+"/receipt" {
		t.Errorf("the page's signed file is %s, want the receipt of %s", href, id)
	}
	return []byte(jws)
}

// TestBrowserReceiptsVerifyAStaffStepUpApproval: an assistant proposes a
// product description through the API; its policy asks for a passkey on
// every approval. In Chromium an agent adds a passkey, signs in with it and
// approves the card on its step-up page through the virtual
// authenticator. Once the write is done, the receipt the assistant fetches
// from the API passes the check of `countersign receipts verify` against
// the console's key set, which names the agent, how they signed in, the
// version and arguments approved, and that the passkey's signature holds.
// The receipt with its arguments changed, with the arguments and the hash
// approved changed together, or with the step-up assertion changed, is
// refused, naming what does not hold. (A staff approval carries no quote
// digest: the customer's consent, which has one, is not in this receipt.)
func TestBrowserReceiptsVerifyAStaffStepUpApproval(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	console := passkeyConsole(t, b)
	b.RequireStepUp(t, "update_product_description")
	task := b.NewTask(t, b.Key, "conv-receipt", []string{"update_product_description"})
	product, err := b.Shop.CreateProduct(t.Context(), demoshop.ProductFixture{Name: "Desk lamp", Description: "A lamp.", PriceCents: 3900, Stock: 5})
	if err != nil {
		t.Fatal(err)
	}
	res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+task["id"].(string)+"/invocations", map[string]any{
		"action": "update_product_description", "args": map[string]any{"product_id": product.ID, "description": "Now in oak."}}).Want(t, http.StatusCreated)
	id := res.JSON["id"].(string)
	if st := b.InvocationState(t, id); st != controlplane.AwaitingApproval {
		t.Fatalf("the proposal is %s, want awaiting approval", st)
	}
	agent := b.Users[accounts.Agent]

	ctx := browsertest.New(t, 120*time.Second)
	virtualAuthenticator(t, ctx)
	addPasskeyInBrowser(t, ctx, console, agent)
	browse(t, ctx, "approve on the step-up page", browserSignIn(agent),
		chromedp.Click(chromedp.CSS(`[data-testid="use-passkey"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)),
		chromedp.Navigate(console+"/queue/"+id), chromedp.Click(chromedp.CSS(`a[data-testid="approve-step-up"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="approve-passkey"]`)), chromedp.Click(chromedp.CSS(`[data-testid="approve-passkey"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="decided-card"]`)))
	if _, err := b.Control.Dispatch(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if st := b.InvocationState(t, id); st != controlplane.Completed {
		t.Fatalf("the approved write is %s, want completed", st)
	}
	receipt := []byte(b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id+"/receipt", nil).Want(t, http.StatusOK).Body)

	jwks := receiptKeys(t, b.Server.URL)
	out := verified(t, "the step-up approval's receipt", receipt, jwks)
	for _, want := range []string{"Invocation:   " + id, `What changed: description = "Now in oak.", product_id = "` + product.ID + `"`,
		"Approval:     " + agent.Name + " (console user " + strconv.FormatInt(agent.ID, 10) + ", ",
		") approved at version ", "Approval:     approved with a passkey by " + agent.Name + ": the passkey's signature holds",
		"Approval:     the arguments are the ones approved", "the arguments hash to args_digest "} {
		if !strings.Contains(out, want) {
			t.Errorf("the step-up approval's receipt does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, " confirmed ") {
		t.Errorf("a staff approval's receipt speaks of a customer's consent:\n%s", out)
	}

	other := func(t *testing.T, c map[string]any) { c["args"].(map[string]any)["description"] = "Now in plastic." }
	refusesEachTampering(t, "the step-up approval's receipt", receipt, jwks,
		tampering{"its arguments", other, "the receipt's arguments hash to"},
		tampering{"its arguments and the hash approved", func(t *testing.T, c map[string]any) {
			other(t, c)
			sum := sha256.Sum256(adapter.Canonical(c["args"].(map[string]any)))
			c["approvals"].([]any)[0].(map[string]any)["args_hash"] = hex.EncodeToString(sum[:])
			c["args_digest"] = hex.EncodeToString(sum[:])
		}, "the passkey assertion of " + agent.Name + "'s approval does not hold"},
		tampering{"the step-up assertion", func(t *testing.T, c map[string]any) {
			s := c["approvals"].([]any)[0].(map[string]any)["step_up"].(map[string]any)
			s["signature"] = flipped(t, s["signature"])
		}, "the passkey assertion of " + agent.Name + "'s approval does not hold"})
}
