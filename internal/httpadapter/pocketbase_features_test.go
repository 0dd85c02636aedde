package httpadapter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
)

func readTool(t *testing.T, a *httpadapter.Adapter, tool, args string) adapter.ReadResult {
	t.Helper()
	res, err := a.Read(context.Background(), ada, tool, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", tool, args, err)
	}
	return res
}

func ids(t *testing.T, res adapter.ReadResult) string {
	t.Helper()
	list, _ := res.Data.([]any)
	var out []string
	for _, it := range list {
		out = append(out, it.(map[string]any)["id"].(string))
	}
	return strings.Join(out, " ")
}

// TestPagingFollowsPageNumbers: a list of two records a page (PocketBase's
// page and totalPages) is read to its end, for a list tool and to resolve
// words naming an object on the second page; past max_pages the list is
// truncated and words over it are refused, not matched against a part.
func TestPagingFollowsPageNumbers(t *testing.T) {
	pb := startPocketBase(t)
	a := connectPB(t, pb, pbFile(t), false)
	if res := readTool(t, a, "list_wallets", `{}`); ids(t, res) != "w1 w2 w3" || res.Truncated {
		t.Errorf("list_wallets: %s (truncated %v), want w1 w2 w3 from both pages", ids(t, res), res.Truncated)
	}
	tg, err := a.Resolve(context.Background(), ada, "wallet", "travel")
	if err != nil || tg.ID != "w3" {
		t.Errorf("Resolve(travel) = %+v, %v; want w3 from the second page", tg, err)
	}

	capped := connectPB(t, pb, pbFile(t, `"max_pages": 5`, `"max_pages": 1`), false)
	if res := readTool(t, capped, "list_wallets", `{}`); ids(t, res) != "w1 w2" || !res.Truncated {
		t.Errorf("list_wallets with max_pages 1: %s (truncated %v), want w1 w2, truncated", ids(t, res), res.Truncated)
	}
	if _, err := capped.Resolve(context.Background(), ada, "wallet", "main"); err == nil {
		t.Error("words were matched against the first page of a longer list")
	}
}

// TestPagingFollowsCursorsAndLinks: a cursor in the answer and a Link
// header are followed to the last page; a Link to another host is not.
func TestPagingFollowsCursorsAndLinks(t *testing.T) {
	pages := map[string]string{"": `{"data":[{"id":"a"}],"next":"p2"}`, "p2": `{"data":[{"id":"b"}],"next":"p3"}`, "p3": `{"data":[{"id":"c"}],"next":""}`}
	var other string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := r.URL.Query().Get("cursor")
		switch c {
		case "":
			w.Header().Set("Link", `<`+"http://"+r.Host+`/items?cursor=p2>; rel="next"`)
		case "p2":
			w.Header().Set("Link", `<`+other+`/items?cursor=p3>; rel="next"`)
		}
		_, _ = w.Write([]byte(pages[c]))
	}))
	defer srv.Close()
	other = "http://elsewhere.invalid"
	file := func(paging string) []byte {
		return []byte(`{"name": "items", "base_url_env": "ITEMS_URL", "auth": {"type": "none"}, "idempotency_header": "Idempotency-Key",
		"objects": {"thing": {"get": "/things/{id}", "id": "/id", "display": "{object.id}"}},
		"read_tools": [{"name": "list_items", "title": "Items", "description": "Items.", "path": "/items", "items": "/data",
			"fields": ["/id"], "paging": ` + paging + `}],
		"actions": [{"name": "touch", "title": "Touch", "description": "Touch.", "guidance": "Touch.", "risk": "reversible",
			"params": [{"name": "thing_id", "type": "string", "required": true, "description": "the thing"}],
			"target": {"kind": "thing", "param": "thing_id"},
			"quote": {"title": "Touch {target.id}", "lines": [], "consequences": [], "confirm_label": "Touch", "decline_label": "No"},
			"request": {"method": "POST", "path": "/things/{target.id}/touch"}, "result": {"reference": "{response.id}"},
			"verify": {"path": "/things/{target.id}", "fields": {"/id": "target.id"}}}],
		"errors": {"code": "/code"}}`)
	}
	cfg := httpadapter.Config{Getenv: func(string) string { return srv.URL }}
	for _, tc := range []struct{ paging, want string }{
		{`{"next": "/next", "param": "cursor"}`, "a b c"},
		{`{"link": true}`, "a b"}, // the second page's Link leaves the system
	} {
		a, err := httpadapter.Load("items.json", file(tc.paging), cfg)
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Read(context.Background(), ada, "list_items", json.RawMessage(`{}`))
		if err != nil || ids(t, res) != tc.want {
			t.Errorf("paging %s: %v, %v; want %s", tc.paging, res.Data, err, tc.want)
		}
	}
	if _, err := httpadapter.Load("items.json", file(`{"next": "/next"}`), cfg); err == nil || !strings.Contains(err.Error(), "/read_tools/0/paging") {
		t.Errorf("a cursor without its param loaded: %v", err)
	}
	noItems := strings.Replace(string(file(`{"link": true}`)), `"items": "/data",`, ``, 1)
	if _, err := httpadapter.Load("items.json", []byte(noItems), cfg); err == nil || !strings.Contains(err.Error(), "paging needs items") {
		t.Errorf("a path tool with paging and no items loaded: %v", err)
	}
}

// TestFilterQuoteKeepsAnArgumentInsideItsLiteral: an argument placed in
// the system's filter language with filter_quote stays one string
// literal, so `" || id != "` finds nothing instead of every wallet; the
// same argument quoted by hand in the path widens the filter to another
// customer's wallet, which is why filter_quote exists.
func TestFilterQuoteKeepsAnArgumentInsideItsLiteral(t *testing.T) {
	pb := startPocketBase(t)
	attack := `{"name": "Main\" || id != \""}`
	a := connectPB(t, pb, pbFile(t), false)
	if res := readTool(t, a, "find_wallet", `{"name": "Main"}`); ids(t, res) != "w1" {
		t.Errorf("find_wallet(Main) = %s, want w1", ids(t, res))
	}
	if res := readTool(t, a, "find_wallet", attack); res.Count != 0 {
		t.Errorf("find_wallet(%s) = %s: the argument widened the filter", attack, ids(t, res))
	}
	// Quoted by hand, the same argument would widen the filter to w4: such
	// a file does not load, and the error says to use filter_quote.
	for _, q := range []string{`%22{args.name}%22`, `\"{args.name}\"`, `'{args.name}'`} {
		_, err := httpadapter.Load("pocketbase.json", pbFile(t, `name={filter_quote(args.name)}`, `name=`+q),
			httpadapter.Config{Getenv: func(string) string { return "http://127.0.0.1:1" }})
		if err == nil || !strings.Contains(err.Error(), "/read_tools/1/path") || !strings.Contains(err.Error(), "filter_quote(args.name)") {
			t.Errorf("an argument quoted by hand (%s) loaded: %v", q, err)
		}
	}
}

// TestFilterQuoteRefusesABackslash: PocketBase ends a literal at a quote
// not preceded by a backslash and undoes only \", so a value with a
// backslash cannot be quoted (`Main\` would leave the literal open): the
// read is refused as invalid_arguments naming the argument, and nothing
// is sent.
func TestFilterQuoteRefusesABackslash(t *testing.T) {
	pb := startPocketBase(t)
	a := connectPB(t, pb, pbFile(t), false)
	for _, arg := range []string{`{"name": "Main\\"}`, `{"name": "a\\\" || id != \""}`} {
		_, err := a.Read(context.Background(), ada, "find_wallet", json.RawMessage(arg))
		ae, _ := adapter.AsError(err)
		if ae == nil || ae.Code != adapter.CodeInvalidArguments || ae.Fields["name"] == "" || !strings.Contains(ae.Message, "backslash") {
			t.Errorf("find_wallet(%s) = %+v, want invalid_arguments naming name", arg, err)
		}
	}
	for _, p := range pb.requested() {
		if strings.Contains(p, "wallets") && strings.Contains(p, "name") {
			t.Errorf("the system was asked for %s", p)
		}
	}
}

// TestAccountToolReadsOnlyTheTasksCustomer: a read tool of the principal's
// own account reads the account the task's customer maps to, whatever the
// model sends; a file whose account tool's path uses args does not load.
func TestAccountToolReadsOnlyTheTasksCustomer(t *testing.T) {
	pb := startPocketBase(t)
	a := connectPB(t, pb, pbFile(t), false)
	res := readTool(t, a, "my_account", `{}`)
	got, _ := res.Data.(map[string]any)
	if got["id"] != "c1" || got["email"] != "ada@example.com" || got["risk_score"] != nil {
		t.Errorf("my_account = %v, want Ada's account without its risk score", res.Data)
	}
	if _, err := a.Read(context.Background(), ada, "my_account", json.RawMessage(`{"customer_id": "c2"}`)); err == nil {
		t.Error("my_account took an argument naming another account")
	}
	for _, p := range pb.requested() {
		if strings.Contains(p, "c2") {
			t.Errorf("the system was asked for %s", p)
		}
	}
	_, err := httpadapter.Load("pocketbase.json", pbFile(t,
		`"account": true,`, `"account": true, "params": [{"name": "customer_id", "type": "string", "description": "whose"}],`,
		`/api/collections/customers/records/{account.id}`, `/api/collections/customers/records/{args.customer_id}`),
		httpadapter.Config{Getenv: func(string) string { return "http://127.0.0.1:1" }})
	if err == nil || !strings.Contains(err.Error(), "/read_tools/2/path") || !strings.Contains(err.Error(), "could name another account") {
		t.Errorf("an account tool reading args loaded: %v", err)
	}
}

// withdraw dry-runs and executes a withdrawal of amount from w1 for Ada.
func withdraw(t *testing.T, a *httpadapter.Adapter, key string, amount int) (adapter.Call, adapter.Result) {
	t.Helper()
	args := json.RawMessage(`{"wallet_id": "w1", "amount_cents": ` + itoa(amount) + `}`)
	q, err := a.DryRun(context.Background(), ada, "withdraw", args)
	if err != nil {
		t.Fatal(err)
	}
	call := adapter.Call{Action: "withdraw", Args: args, IdempotencyKey: key, Quote: q}
	res, err := a.Execute(context.Background(), ada, call)
	if err != nil {
		t.Fatal(err)
	}
	return call, res
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestVerifyExpectComparesBeforeAndAfter: verify.expect holds when the
// balance read back is the balance before less the amount, and not when
// the system took more; "before" comes from the quote, so a verification
// from the stored call alone works.
func TestVerifyExpectComparesBeforeAndAfter(t *testing.T) {
	pb := startPocketBase(t)
	a := connectPB(t, pb, pbFile(t), true)
	call, res := withdraw(t, a, "k-verify-1", 1250)
	if call.Quote.Basis == nil {
		t.Fatal("the quote keeps no basis for verify.expect")
	}
	v, err := a.Verify(context.Background(), ada, call, &res)
	if err != nil || !v.Verified {
		t.Fatalf("Verify = %+v, %v; want verified", v, err)
	}
	pb.skim = 1
	call, res = withdraw(t, a, "k-verify-2", 100)
	v, err = a.Verify(context.Background(), ada, call, &res)
	if err != nil || v.Verified || !strings.Contains(v.Evidence, "after.balance_cents == before.balance_cents - args.amount_cents does not hold") {
		t.Errorf("Verify after the system took a cent more = %+v, %v; want not verified, naming expect", v, err)
	}
	if _, err := httpadapter.Load("pocketbase.json", pbFile(t, `"expect": "after.balance_cents == before.balance_cents`, `"expect": "after.balance_cents == before`),
		httpadapter.Config{Getenv: func(string) string { return "http://127.0.0.1:1" }}); err == nil {
		t.Error("an expect reading before as a whole loaded")
	}
	if _, err := httpadapter.Load("pocketbase.json", pbFile(t, `"expect": "after.balance_cents == before.balance_cents - args.amount_cents"`, `"expect": "before.balance_cents >= args.amount_cents"`),
		httpadapter.Config{Getenv: func(string) string { return "http://127.0.0.1:1" }}); err == nil || !strings.Contains(err.Error(), "expect never reads after") {
		t.Errorf("an expect that never reads after loaded: %v", err)
	}
	if _, err := httpadapter.Load("pocketbase.json", pbFile(t, `- args.amount_cents"`, `- args.amuont_cents"`),
		httpadapter.Config{Getenv: func(string) string { return "http://127.0.0.1:1" }}); err == nil || !strings.Contains(err.Error(), "did you mean args.amount_cents") {
		t.Errorf("an expect with a misspelled argument: %v", err)
	}
}

// TestAStaleBasisIsRefused: when the balance verify.expect compares with
// changed after the preview (the record's version did not), the write is
// refused as target_changed and nothing is sent.
func TestAStaleBasisIsRefused(t *testing.T) {
	pb := startPocketBase(t)
	a := connectPB(t, pb, pbFile(t), true)
	args := json.RawMessage(`{"wallet_id": "w1", "amount_cents": 100}`)
	q, err := a.DryRun(context.Background(), ada, "withdraw", args)
	if err != nil {
		t.Fatal(err)
	}
	pb.mu.Lock()
	for _, w := range pb.cols["wallets"] {
		if w["id"] == "w1" {
			w["balance_cents"] = 4000
		}
	}
	pb.mu.Unlock()
	_, err = a.Execute(context.Background(), ada, adapter.Call{Action: "withdraw", Args: args, IdempotencyKey: "k-stale", Quote: q})
	if ae, _ := adapter.AsError(err); ae == nil || ae.Code != adapter.CodeStaleTarget {
		t.Errorf("Execute over a changed balance = %v, want %s", err, adapter.CodeStaleTarget)
	}
	if n := pb.withdrawals(""); n != 0 {
		t.Errorf("%d withdrawals were sent", n)
	}
}

// TestEffectAmountIsTheSystemsOwn: the result reads the amount the system
// answers it recorded (result.amount_cents), and Lookup each effect's
// amount and currency where the file's effects say (in whole units here,
// on the second page), so the console and the receipt show what the
// system moved: 12.40 EUR after its fee, beside the 12.50 asked for.
func TestEffectAmountIsTheSystemsOwn(t *testing.T) {
	pb := startPocketBase(t)
	pb.feeCents = 10
	a := connectPB(t, pb, pbFile(t), true)
	call, res := withdraw(t, a, "k-amount-1", 1250)
	if res.AmountCents == nil || *res.AmountCents != 1240 || res.Currency != "EUR" {
		t.Errorf("result %+v: want 1240 EUR, the amount the system recorded", res)
	}
	look, err := a.Lookup(context.Background(), ada, call)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, e := range look.Effects {
		if e.Kind != "withdrawal" {
			continue
		}
		found = true
		if e.AmountCents == nil || *e.AmountCents != 1240 || e.Currency != "EUR" {
			t.Errorf("effect %+v: want 1240 EUR, the amount the system recorded", e)
		}
	}
	if !found || len(look.Effects) != 2 {
		t.Errorf("Lookup found effects %+v, want both pages' effects", look.Effects)
	}
}

// TestAnUnreadableRecordedAmountLeavesTheWriteLanded: the recorded amount
// is optional, so a 2xx answer it cannot be read from is still applied
// (logged, no amount), not unknown; amount_unit major reads whole units.
func TestAnUnreadableRecordedAmountLeavesTheWriteLanded(t *testing.T) {
	pb := startPocketBase(t)
	a := connectPB(t, pb, pbFile(t, `"amount_cents": "response.amount_cents"`, `"amount_cents": "response.amount_moved"`), true)
	_, res := withdraw(t, a, "k-amount-2", 100)
	if res.AmountCents != nil || res.Reference == "" {
		t.Errorf("result %+v: want landed, without an amount", res)
	}
	major := connectPB(t, pb, pbFile(t, `"amount_cents": "response.amount_cents"`,
		`"amount_unit": "major", "amount_cents": "string(double(response.amount_cents) / 100.0)"`), true)
	_, res = withdraw(t, major, "k-amount-3", 1250)
	if res.AmountCents == nil || *res.AmountCents != 1250 {
		t.Errorf("result %+v: want 1250 cents read from 12.5 in whole units", res)
	}
}
