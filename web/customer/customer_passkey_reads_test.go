package customer_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/consent"
	"countersign/web/webtest"
)

// TestAPasskeyConfirmationRecordsThePasskeysUseOnce: a confirmation with
// a passkey takes two transactions around the dry run, and checks the
// passkey (locked, as the customer's) in both, but records its use —
// the counter and the last use — in the ceremony's check and in the
// transaction that records the decision only, not also in the one before
// the dry run.
func TestAPasskeyConfirmationRecordsThePasskeysUseOnce(t *testing.T) {
	t.Parallel()
	rec := &webtest.Statements{}
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithQueryTracer(rec))
	pk, origin := passkeyCustomers(t, b)
	first, _ := b.PendingRefund(t)
	account := pk.Client(t)
	account.MustSignIn(b.CustomerAccount(t, webtest.Jordan))
	if res := account.Post("/requests/"+first.ID+"/decline", url.Values{"_csrf": {account.PageCSRF(account.Get("/requests/" + first.ID))}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("decline with the account: %d", res.StatusCode)
	}
	k, status, _ := addCustomerPasskey(t, account, first.ID, origin)
	if status != http.StatusOK {
		t.Fatalf("adding the passkey: %d", status)
	}
	inv, link := b.PendingRefund(t)
	c := pk.Client(t)
	var r passkeyReply
	sql := rec.During(func() { status, r = decideWithPasskey(t, c, link, consent.Confirm, k, origin) })
	if status != http.StatusOK || r.Next != "/requests/"+inv.ID {
		t.Fatalf("confirm with the passkey: %d %+v", status, r)
	}
	locks, uses := 0, 0
	for _, q := range sql {
		switch {
		case strings.HasPrefix(q, "SELECT") && strings.Contains(q, "FROM customer_passkeys") && strings.HasSuffix(q, "FOR UPDATE"):
			locks++
		case strings.HasPrefix(q, "UPDATE customer_passkeys"):
			uses++
		}
	}
	if locks != 2 || uses != 2 {
		t.Errorf("the passkey was locked %d times and its use recorded %d times, want 2 and 2 (the ceremony's, the decision's):\n%s",
			locks, uses, strings.Join(sql, "\n"))
	}
}
