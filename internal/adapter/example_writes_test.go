package adapter_test

import (
	"context"
	"encoding/json"
	"fmt"

	"countersign/internal/adapter"
)

// A third adapter's write verbs through the kit: it writes its action's
// plan (what the call would change, read but not changed) and the send
// that carries it out; adapter.Writes gives it Actions, DryRun and Execute,
// with the ledger, the quote check and the replay of a repeated key.
func ExampleWrites() {
	names := map[string]string{"p1": "Atlas"}
	w := adapter.Writes[adapter.ActionSpec]{
		Planner: adapter.Planner{System: "projects", Ledger: adapter.NewLedger(&memLedger{}, nil)},
		Defs:    []adapter.ActionSpec{renameProject},
		Spec:    func(s adapter.ActionSpec) adapter.ActionSpec { return s },
		Plan: func(_ context.Context, _ adapter.ActionSpec, _ adapter.Principal, args map[string]any) (adapter.Plan, error) {
			id, to := args["project_id"].(string), args["name"].(string)
			from, ok := names[id]
			if !ok {
				return adapter.Plan{}, adapter.NotFound("project", id)
			}
			q := adapter.Quote{Title: "Rename " + from, Target: adapter.Target{System: "projects", Kind: "project", ID: id, Display: from},
				Lines: []adapter.QuoteLine{{Label: "Name", From: from, To: to}}}
			return adapter.Plan{Quote: q, Send: func(_ context.Context, key string) (adapter.Result, error) {
				names[id] = to
				return adapter.Result{Reference: "rename_" + key}, nil
			}}, nil
		},
	}
	ctx := context.Background()
	raw := json.RawMessage(`{"project_id":"p1","name":"Orion"}`)
	q, _ := w.DryRun(ctx, adapter.Principal{CustomerRef: "jo@example.com"}, "rename_project", raw)
	call := adapter.Call{Action: "rename_project", Args: raw, IdempotencyKey: "k1", Quote: q}
	first, _ := w.Execute(ctx, adapter.Principal{CustomerRef: "jo@example.com"}, call)
	again, _ := w.Execute(ctx, adapter.Principal{CustomerRef: "jo@example.com"}, call)
	fmt.Println(q.Title, "→", names["p1"])
	fmt.Println(first.Reference, again.Reference, again.Deduplicated)
	// Output:
	// Rename Atlas → Orion
	// rename_k1 rename_k1 true
}
