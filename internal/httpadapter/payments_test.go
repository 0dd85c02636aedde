package httpadapter_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"countersign/internal/adapter/adaptertest"
)

// paymentsSystem is a Stripe-shaped payment API, the system
// testdata/example/payments.json describes: customers found by a search
// query, charges with nested metadata and an internal risk score, refunds
// created by a form-encoded POST /v1/refunds that it keeps under their
// Idempotency-Key (the same key again replays the first answer, with other
// parameters it is an idempotency_error), found again by a search on a
// metadata key, and errors as {"error": {"type", "code", "message"}}.
type paymentsSystem struct {
	*httptest.Server
	// authorized says whether a request's credentials are good; nil
	// accepts "Bearer sk_test_countersign" only.
	authorized func(*http.Request) bool

	mu        sync.Mutex
	customers []map[string]any
	charges   []map[string]any
	refunds   []map[string]any
	// sent counts the refund requests that reached the system per key,
	// answered keeps each key's first answer and params its body.
	sent     map[string]int
	answered map[string][]byte
	params   map[string]string
	// keyOf is the Idempotency-Key each refund was created under.
	keyOf map[string]string
	fault adaptertest.Fault
	// expireOnRefund answers the next refund 401 as if its token lapsed
	// while it travelled, without applying it.
	expireOnRefund bool
	// answerNext, when set, is the status and body the next refund is
	// answered with, unapplied.
	answerNext *struct {
		status int
		body   string
	}
}

const paymentsKey = "sk_test_countersign"

func startPayments(t *testing.T) *paymentsSystem {
	t.Helper()
	charge := func(id, customer, description string, amount, refunded int, order string) map[string]any {
		return map[string]any{"id": id, "object": "charge", "customer": customer, "description": description, "amount": amount,
			"amount_refunded": refunded, "refunded": refunded == amount, "currency": "usd", "status": "succeeded",
			"metadata": map[string]any{"order_number": order}, "outcome": map[string]any{"risk_level": "normal", "risk_score": 12}}
	}
	ps := &paymentsSystem{sent: map[string]int{}, answered: map[string][]byte{}, params: map[string]string{}, keyOf: map[string]string{},
		customers: []map[string]any{{"id": "cus_1", "object": "customer", "email": "ada@example.com", "name": "Ada"},
			{"id": "cus_2", "object": "customer", "email": "bob@example.com", "name": "Bob"}},
		charges: []map[string]any{
			charge("ch_1", "cus_1", "Walnut desk lamp", 8400, 0, "1001"),
			charge("ch_2", "cus_1", "Brass floor lamp", 4900, 0, "1002"),
			charge("ch_3", "cus_1", "Linen napkins", 1200, 1200, "1003"),
			charge("ch_4", "cus_2", "Oak stool", 3000, 0, "2001"),
		}}
	ps.Server = httptest.NewServer(http.HandlerFunc(ps.serve))
	t.Cleanup(ps.Close)
	return ps
}

func (ps *paymentsSystem) fail(w http.ResponseWriter, status int, typ, code, message string) {
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": typ, "code": code, "message": message}})
}

var searchKey = regexp.MustCompile(`^metadata\['countersign_key'\]:'([^']*)'$`)

func (ps *paymentsSystem) serve(w http.ResponseWriter, r *http.Request) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	ok := r.Header.Get("Authorization") == "Bearer "+paymentsKey
	if ps.authorized != nil {
		ok = ps.authorized(r)
	}
	if !ok {
		ps.fail(w, http.StatusUnauthorized, "invalid_request_error", "", "Invalid API Key provided.")
		return
	}
	q := r.URL.Query()
	list := func(items []map[string]any, keep func(map[string]any) bool) {
		out := []map[string]any{}
		for _, it := range items {
			if keep(it) {
				out = append(out, it)
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": out, "has_more": false})
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/customers/search":
		list(ps.customers, func(c map[string]any) bool { return q.Get("query") == "email:'"+c["email"].(string)+"'" })
	case r.Method == http.MethodGet && r.URL.Path == "/v1/charges":
		list(ps.charges, func(c map[string]any) bool { return c["customer"] == q.Get("customer") })
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/charges/"):
		if c := find(ps.charges, strings.TrimPrefix(r.URL.Path, "/v1/charges/")); c != nil {
			_ = json.NewEncoder(w).Encode(c)
			return
		}
		ps.fail(w, http.StatusNotFound, "invalid_request_error", "resource_missing", "No such charge.")
	case r.Method == http.MethodGet && r.URL.Path == "/v1/refunds":
		list(ps.refunds, func(rf map[string]any) bool { return rf["charge"] == q.Get("charge") })
	case r.Method == http.MethodGet && r.URL.Path == "/v1/refunds/search":
		m := searchKey.FindStringSubmatch(q.Get("query"))
		list(ps.refunds, func(rf map[string]any) bool {
			return m != nil && rf["metadata"].(map[string]any)["countersign_key"] == m[1]
		})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/refunds":
		ps.refund(w, r)
	default:
		ps.fail(w, http.StatusNotFound, "invalid_request_error", "resource_missing", "Unrecognized request URL.")
	}
}

func find(items []map[string]any, id string) map[string]any {
	for _, it := range items {
		if it["id"] == id {
			return it
		}
	}
	return nil
}

// refund creates a refund from a form body, as Stripe does.
func (ps *paymentsSystem) refund(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	ps.sent[key]++
	if ps.expireOnRefund {
		ps.expireOnRefund = false
		ps.fail(w, http.StatusUnauthorized, "invalid_request_error", "token_expired", "The access token expired.")
		return
	}
	if a := ps.answerNext; a != nil {
		ps.answerNext = nil
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
		return
	}
	fault := ps.fault
	ps.fault = ""
	switch fault {
	case adaptertest.FaultServerError:
		ps.fail(w, http.StatusInternalServerError, "api_error", "", "Something went wrong on our end.")
		return
	case adaptertest.FaultReset:
		_ = r.ParseForm()
		hangUp(w)
		return
	}
	if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || r.ParseForm() != nil {
		ps.fail(w, http.StatusBadRequest, "invalid_request_error", "parameter_missing", "Send the parameters form-encoded.")
		return
	}
	raw := r.PostForm.Encode()
	if prev, ok := ps.answered[key]; ok && key != "" {
		if ps.params[key] != raw {
			ps.fail(w, http.StatusBadRequest, "idempotency_error", "", "Keys for idempotent requests can only be used with the same parameters.")
			return
		}
		w.Header().Set("Idempotent-Replayed", "true")
		_, _ = w.Write(prev)
		return
	}
	charge := find(ps.charges, r.PostForm.Get("charge"))
	amount, err := strconv.Atoi(r.PostForm.Get("amount"))
	switch {
	case charge == nil:
		ps.fail(w, http.StatusBadRequest, "invalid_request_error", "resource_missing", "No such charge.")
		return
	case charge["refunded"] == true:
		ps.fail(w, http.StatusBadRequest, "invalid_request_error", "charge_already_refunded", "Charge has already been refunded.")
		return
	case err != nil || amount < 1 || amount > charge["amount"].(int)-charge["amount_refunded"].(int):
		ps.fail(w, http.StatusBadRequest, "invalid_request_error", "amount_too_large", "Refund amount is greater than unrefunded amount on charge.")
		return
	}
	charge["amount_refunded"] = charge["amount_refunded"].(int) + amount
	charge["refunded"] = charge["amount_refunded"] == charge["amount"]
	metadata := map[string]any{}
	for k, v := range r.PostForm {
		if name, ok := strings.CutPrefix(k, "metadata["); ok && strings.HasSuffix(name, "]") {
			metadata[strings.TrimSuffix(name, "]")] = v[0]
		}
	}
	rf := map[string]any{"id": fmt.Sprintf("re_%d", len(ps.refunds)+1), "object": "refund", "amount": amount, "charge": charge["id"],
		"currency": charge["currency"], "reason": r.PostForm.Get("reason"), "status": "succeeded", "metadata": metadata,
		"created": 1776006245 + len(ps.refunds)}
	ps.refunds = append(ps.refunds, rf)
	ps.keyOf[rf["id"].(string)] = key
	answer := map[string]any{}
	for k, v := range rf {
		answer[k] = v
	}
	if r.PostForm.Get("expand[0]") == "charge" {
		answer["charge"] = charge
	}
	body, _ := json.Marshal(answer)
	ps.answered[key], ps.params[key] = body, raw
	if fault == adaptertest.FaultDropAfterCommit {
		hangUp(w)
		return
	}
	_, _ = w.Write(body)
}

// effects counts the refunds created under the Idempotency-Key key (all
// of them when key is "").
func (ps *paymentsSystem) effects(key string) int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	n := 0
	for _, rf := range ps.refunds {
		if key == "" || ps.keyOf[rf["id"].(string)] == key {
			n++
		}
	}
	return n
}

// sends is how many refund requests reached the system under key.
func (ps *paymentsSystem) sends(key string) int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.sent[key]
}
