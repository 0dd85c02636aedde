package shopadapter_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/adapter/adaptertest"
	"countersign/internal/adapter/conformance"
	"countersign/internal/demoshop/shoptest"
	"countersign/internal/shopadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestIDArgumentsCannotMoveAPath: every argument naming one of the shop's
// objects — each action's target and each read tool's *_id, which the
// adapter reads as /orders/{id} — is refused at validation when it is a
// dot segment or holds a slash, as it is or percent-encoded, with a field
// error naming it; the shop sees no request at all.
func TestIDArgumentsCannotMoveAPath(t *testing.T) {
	t.Parallel()
	shop := shoptest.Start(t, testNow)
	tr := &adaptertest.CountingTransport{}
	sys := shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: shop.URL, Token: shop.Token(), Now: clock,
		Ledger: adapter.NewLedger(store.New(dbtest.New(t)), clock), HTTPClient: &http.Client{Transport: tr, Timeout: 10 * time.Second}})
	fix := shoptest.Fixture()
	refused := func(t *testing.T, what, arg, v string, err error, before int64) {
		t.Helper()
		if ae, ok := adapter.AsError(err); !ok || ae.Code != adapter.CodeInvalidArguments || ae.Fields[arg] == "" {
			t.Errorf("%s: %s = %q was not refused naming it: %v", what, arg, v, err)
		}
		if n := tr.Requests() - before; n != 0 {
			t.Errorf("%s: %s = %q: the shop saw %d requests", what, arg, v, n)
		}
	}
	actions := 0
	for _, a := range sys.Actions() {
		var base map[string]any
		for _, v := range fix.Every {
			if v.Action == a.Name {
				raw, _ := json.Marshal(v.Args)
				_ = json.Unmarshal(raw, &base)
			}
		}
		if base == nil || a.TargetParam == "" {
			t.Fatalf("action %s: no fixture call or no target", a.Name)
		}
		actions++
		for _, v := range conformance.PathValues {
			args := maps.Clone(base)
			args[a.TargetParam] = v
			raw, _ := json.Marshal(args)
			before := tr.Requests()
			_, err := sys.DryRun(t.Context(), fix.Principal, a.Name, raw)
			refused(t, "action "+a.Name, a.TargetParam, v, err, before)
		}
	}
	reads := 0
	for _, r := range sys.ReadTools() {
		for _, p := range r.Params {
			if !strings.HasSuffix(p.Name, "_id") {
				continue
			}
			reads++
			for _, v := range conformance.PathValues {
				raw, _ := json.Marshal(map[string]any{p.Name: v})
				before := tr.Requests()
				_, err := sys.Read(t.Context(), fix.Principal, r.Name, raw)
				refused(t, "read "+r.Name, p.Name, v, err, before)
			}
		}
	}
	if actions < 6 || reads < 3 {
		t.Errorf("checked %d actions and %d read tools; want every one with an id", actions, reads)
	}
}
