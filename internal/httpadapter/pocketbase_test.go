package httpadapter_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/adapter/adaptertest"
	"countersign/internal/httpadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// pocketBase is a small PocketBase-shaped system: collections of records
// under /api/collections/<name>/records, read with a filter in its own
// language (field = "literal", joined by && and ||) and in pages
// (page, perPage, totalPages).
type pocketBase struct {
	*httptest.Server
	mu    sync.Mutex
	cols  map[string][]map[string]any
	paths []string
	// skim, when set, takes this much more than asked from a wallet.
	skim int64
	// feeCents is taken off every withdrawal the effect records.
	feeCents int64
	// fault is played on the next withdrawal (adaptertest's faults).
	fault adaptertest.Fault
}

const pbToken = "pb_test_token"

func startPocketBase(t *testing.T) *pocketBase {
	t.Helper()
	pb := &pocketBase{cols: map[string][]map[string]any{
		"customers": {
			{"id": "c1", "email": "ada@example.com", "name": "Ada", "credit_limit_cents": 50000, "risk_score": 7},
			{"id": "c2", "email": "bob@example.com", "name": "Bob", "credit_limit_cents": 90000, "risk_score": 2},
		},
		"wallets": {
			{"id": "w1", "customer": "c1", "name": "Main", "kind": "cash", "balance_cents": 5000, "updated": "1"},
			{"id": "w2", "customer": "c1", "name": "Savings", "kind": "savings", "balance_cents": 1000, "updated": "1"},
			{"id": "w3", "customer": "c1", "name": "Travel", "kind": "cash", "balance_cents": 3000, "updated": "1"},
			{"id": "w4", "customer": "c2", "name": "Main", "kind": "cash", "balance_cents": 9999, "updated": "1"},
		},
	}}
	pb.Server = httptest.NewServer(http.HandlerFunc(pb.serve))
	t.Cleanup(pb.Close)
	return pb
}

func (pb *pocketBase) serve(w http.ResponseWriter, r *http.Request) {
	pb.mu.Lock()
	defer pb.mu.Unlock()
	pb.paths = append(pb.paths, r.URL.RequestURI())
	if r.Header.Get("Authorization") != pbToken {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/collections/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	col, id, _ := strings.Cut(strings.TrimSuffix(rest, "/"), "/records")
	id = strings.TrimPrefix(id, "/")
	switch {
	case r.Method == http.MethodPost && col == "withdrawals":
		fault := pb.fault
		pb.fault = ""
		switch fault {
		case adaptertest.FaultServerError:
			w.WriteHeader(http.StatusServiceUnavailable)
		case adaptertest.FaultReset:
			_, _ = io.Copy(io.Discard, r.Body)
			hangUp(w)
		case adaptertest.FaultDropAfterCommit:
			pb.withdraw(httptest.NewRecorder(), r)
			hangUp(w)
		default:
			pb.withdraw(w, r)
		}
	case r.Method != http.MethodGet:
		w.WriteHeader(http.StatusMethodNotAllowed)
	case id != "":
		for _, rec := range pb.cols[col] {
			if rec["id"] == id {
				_ = json.NewEncoder(w).Encode(rec)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]any{"code": "not_found"})
	default:
		pb.list(w, r, col)
	}
}

func (pb *pocketBase) list(w http.ResponseWriter, r *http.Request, col string) {
	q := r.URL.Query()
	var out []map[string]any
	for _, rec := range pb.cols[col] {
		ok, err := filterMatches(q.Get("filter"), rec)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"code": "invalid_filter", "message": err.Error()})
			return
		}
		if ok {
			out = append(out, rec)
		}
	}
	per, _ := strconv.Atoi(q.Get("perPage"))
	if per <= 0 {
		per = 30
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	total := (len(out) + per - 1) / per
	from, to := min((page-1)*per, len(out)), min(page*per, len(out))
	items := out[from:to]
	if items == nil {
		items = []map[string]any{}
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"page": page, "perPage": per, "totalItems": len(out), "totalPages": total, "items": items})
}

func (pb *pocketBase) withdraw(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Wallet      string `json:"wallet"`
		AmountCents int64  `json:"amount_cents"`
		RequestID   string `json:"request_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.RequestID == "" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	for _, e := range pb.cols["effects"] {
		if e["request_id"] == body.RequestID {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"code": "validation_not_unique"})
			return
		}
	}
	for _, wal := range pb.cols["wallets"] {
		if wal["id"] == body.Wallet {
			wal["balance_cents"] = wal["balance_cents"].(int) - int(body.AmountCents+pb.skim)
			wal["updated"] = strconv.Itoa(len(pb.cols["effects"]) + 2)
		}
	}
	n := len(pb.cols["effects"])
	rec := fmt.Sprintf("wd%d", n)
	at := time.Date(2026, 4, 12, 15, 4, 5, 0, time.UTC).Format("2006-01-02 15:04:05.000Z")
	// Two effects per withdrawal, the amount on the second: with one
	// effect a page, only a lookup that follows the pages finds it.
	pb.cols["effects"] = append(pb.cols["effects"],
		map[string]any{"id": fmt.Sprintf("e%d", n), "request_id": body.RequestID, "kind": "audit", "wallet": body.Wallet, "created": at},
		map[string]any{"id": fmt.Sprintf("e%d", n+1), "request_id": body.RequestID, "kind": "withdrawal", "wallet": body.Wallet,
			"record": rec, "created": at, "amount": float64(body.AmountCents-pb.feeCents) / 100, "currency": "eur"})
	_ = json.NewEncoder(w).Encode(map[string]any{"id": rec, "wallet": body.Wallet, "amount_cents": body.AmountCents - pb.feeCents, "currency": "eur"})
}

// filterMatches evaluates a filter of PocketBase's shape, left to right:
// conditions field = "literal" or field != "literal" (\" in the
// literal is a quote) joined by && and ||. "" matches everything.
func filterMatches(filter string, rec map[string]any) (bool, error) {
	s := strings.TrimSpace(filter)
	if s == "" {
		return true, nil
	}
	result, join := false, ""
	for {
		s = strings.TrimSpace(s)
		i := strings.IndexAny(s, "!=")
		if i <= 0 {
			return false, fmt.Errorf("no condition at %q", s)
		}
		field := strings.TrimSpace(s[:i])
		neg := s[i] == '!'
		s = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(s[i:], "!"), "="))
		if !strings.HasPrefix(s, `"`) {
			return false, fmt.Errorf("no literal at %q", s)
		}
		var lit strings.Builder
		j := 1
		// As PocketBase's fexpr scans text: the literal ends at a quote not
		// preceded by a backslash, and only \" is undone.
		for ; j < len(s) && (s[j] != '"' || s[j-1] == '\\'); j++ {
			if s[j] == '\\' && j+1 < len(s) && s[j+1] == '"' {
				continue
			}
			lit.WriteByte(s[j])
		}
		if j >= len(s) {
			return false, fmt.Errorf("unterminated literal")
		}
		s = s[j+1:]
		v := fmt.Sprint(rec[field]) == lit.String()
		if neg {
			v = !v
		}
		switch join {
		case "":
			result = v
		case "&&":
			result = result && v
		case "||":
			result = result || v
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return result, nil
		}
		if len(s) < 2 || (s[:2] != "&&" && s[:2] != "||") {
			return false, fmt.Errorf("no && or || at %q", s)
		}
		join, s = s[:2], s[2:]
	}
}

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
	}
}

// withdrawals counts the withdrawal effects recorded under key (all of
// them when key is "").
func (pb *pocketBase) withdrawals(key string) int {
	pb.mu.Lock()
	defer pb.mu.Unlock()
	n := 0
	for _, e := range pb.cols["effects"] {
		if e["kind"] == "withdrawal" && (key == "" || e["request_id"] == key) {
			n++
		}
	}
	return n
}

// requested lists the request URIs the system received.
func (pb *pocketBase) requested() []string {
	pb.mu.Lock()
	defer pb.mu.Unlock()
	return append([]string(nil), pb.paths...)
}

// pbFile is testdata/example/pocketbase.json with each old → new
// replacement made.
func pbFile(t *testing.T, pairs ...string) []byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/example/pocketbase.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(string(raw), pairs[i]) {
			t.Fatalf("pocketbase.json has no %s", pairs[i])
		}
		raw = []byte(strings.Replace(string(raw), pairs[i], pairs[i+1], 1))
	}
	return raw
}

// connectPB loads raw against pb, with a request ledger when ledger is set.
func connectPB(t *testing.T, pb *pocketBase, raw []byte, ledger bool) *httpadapter.Adapter {
	t.Helper()
	return connectPBThrough(t, pb, raw, ledger, http.DefaultTransport)
}

// connectPBThrough is connectPB sending through tr.
func connectPBThrough(t *testing.T, pb *pocketBase, raw []byte, ledger bool, tr http.RoundTripper) *httpadapter.Adapter {
	t.Helper()
	cfg := httpadapter.Config{Now: clock, HTTPClient: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		Getenv: func(name string) string { return map[string]string{"PB_URL": pb.URL, "PB_TOKEN": pbToken}[name] }}
	if ledger {
		cfg.Ledger = adapter.NewLedger(store.New(dbtest.New(t)), clock)
	}
	a, err := httpadapter.Load("pocketbase.json", raw, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var ada = adapter.Principal{CustomerRef: "ada@example.com"}

// pbBackend is a conformance backend: a fresh PocketBase-shaped system
// with testdata/example/pocketbase.json connected to it.
func pbBackend(file string) adaptertest.Setup {
	return func(t *testing.T, tr http.RoundTripper) adaptertest.Backend {
		pb := startPocketBase(t)
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return adaptertest.Backend{System: connectPBThrough(t, pb, raw, true, tr),
			Effects: func(_ *testing.T, key string) int { return pb.withdrawals(key) },
			Fault: func(_ *testing.T, f adaptertest.Fault) {
				pb.mu.Lock()
				defer pb.mu.Unlock()
				pb.fault = f
			}}
	}
}

// pbFixture is the conformance fixture of startPocketBase's records.
func pbFixture() adaptertest.Fixture {
	return adaptertest.Fixture{
		Principal: ada,
		Other:     adapter.Principal{CustomerRef: "bob@example.com"},
		Resolve:   adaptertest.Reference{Kind: "wallet", Ref: "travel", WantID: "w3"},
		Ambiguous: adaptertest.Reference{Kind: "wallet", Ref: "cash"},
		Foreign:   adaptertest.Reference{Kind: "wallet", Ref: "w4", WantID: "w4"},
		Write:     adaptertest.Call{Action: "withdraw", Args: map[string]any{"wallet_id": "w1", "amount_cents": 100}},
		Refused:   adaptertest.Call{Action: "withdraw", Args: map[string]any{"wallet_id": "w2", "amount_cents": 5000}},
		Refusal:   adaptertest.Answer{Status: 400, Body: `{"code": "invalid"}`, WantCode: "invalid_arguments"},
		Reads: []adaptertest.Read{
			{Tool: "list_wallets", Args: map[string]any{}},
			{Tool: "find_wallet", Args: map[string]any{"name": "Main"}},
			{Tool: "my_account", Args: map[string]any{}},
		},
		Every: []adaptertest.Varied{{Call: adaptertest.Call{Action: "withdraw", Args: map[string]any{"wallet_id": "w1", "amount_cents": 100}},
			Other: map[string][]any{"wallet_id": {"w3"}, "amount_cents": {250}}}},
	}
}
