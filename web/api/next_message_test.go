package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"countersign/internal/confirmation"
	"countersign/web/webtest"
)

// TestNextMessageSaysWhatTheSystemAccepts: next.message tells the
// assistant what its customer will really be asked, as next.proofs
// lists it: the mail with a link where the system takes it, a code only
// where the business turned codes on, the account where nothing is
// mailed — and never to have anything read out.
func TestNextMessageSaysWhatTheSystemAccepts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		proofs       map[string][]confirmation.Proof
		want, absent []string
	}{
		{"the default", nil, []string{"e-mail them the whole request with a single-use link", "sign in to their account",
			"Never ask the customer to read anything out"}, []string{"code"}},
		{"typed codes on", map[string][]confirmation.Proof{"shop": {confirmation.ProofCode, confirmation.ProofAccount}},
			[]string{"a code we e-mail them", "Never ask the customer for their code"}, []string{"link to decide"}},
		{"the account only", map[string][]confirmation.Proof{"shop": {confirmation.ProofAccount}},
			[]string{"sign in to their account"}, []string{"code", "e-mail"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := []webtest.Option{webtest.WithShop(), webtest.WithAssistant()}
			if tc.proofs != nil {
				opts = append(opts, webtest.WithProofs(tc.proofs))
			}
			b := webtest.New(t, opts...)
			b.StageForCustomer(t, "issue_refund")
			res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations", map[string]any{"action": "issue_refund",
				"args": map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}}).Want(t, http.StatusCreated)
			next := res.JSON["next"].(map[string]any)
			msg, _ := next["message"].(string)
			proofs, _ := json.Marshal(next["proofs"])
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("next.message (proofs %s) lacks %q: %q", proofs, w, msg)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(msg, a) {
					t.Errorf("next.message (proofs %s) speaks of %q: %q", proofs, a, msg)
				}
			}
		})
	}
}
