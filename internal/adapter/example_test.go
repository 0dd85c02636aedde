package adapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"countersign/internal/adapter"
)

// projects is a business system in memory: one customer's projects by id,
// each with a name, and the changes it applied by idempotency key.
type projects struct {
	names   map[string]string
	applied map[string]adapter.Result
}

var renameProject = adapter.ActionSpec{
	Name: "rename_project", Title: "Rename a project", Risk: adapter.Reversible, Compensation: "rename_project",
	Description: "Gives one of the customer's projects a new name.",
	TargetKind:  "project", TargetParam: "project_id",
	Params: []adapter.Param{
		{Name: "project_id", Type: "string", Required: true, Description: "The project's id."},
		{Name: "name", Type: "string", Required: true, MaxLength: 40, Description: "The new name."},
	},
}

func (s *projects) Name() string                      { return "projects" }
func (s *projects) Actions() []adapter.ActionSpec     { return []adapter.ActionSpec{renameProject} }
func (s *projects) ReadTools() []adapter.ReadToolSpec { return nil }

func (s *projects) Resolve(_ context.Context, _ adapter.Principal, kind, ref string) (adapter.Target, error) {
	name, ok := s.names[ref]
	if kind != "project" || !ok {
		return adapter.Target{}, adapter.NotFound(kind, ref)
	}
	return adapter.Target{System: s.Name(), Kind: kind, ID: ref, Display: name}, nil
}

// DryRun validates the arguments against the action's spec and says, in
// full, what Execute would change; it changes nothing.
func (s *projects) DryRun(ctx context.Context, p adapter.Principal, action string, raw json.RawMessage) (adapter.Quote, error) {
	args, err := renameProject.Validate(raw)
	if err != nil {
		return adapter.Quote{}, err
	}
	target, err := s.Resolve(ctx, p, "project", args["project_id"].(string))
	if err != nil {
		return adapter.Quote{}, err
	}
	return adapter.Quote{
		Title: "Rename " + target.Display, Target: target,
		Lines:        []adapter.QuoteLine{{Label: "Name", From: target.Display, To: args["name"].(string)}},
		ConfirmLabel: "Rename project", DeclineLabel: "Keep the name", Reversible: true,
	}, nil
}

// Execute applies the call once for its idempotency key: a repeated key
// sends nothing and returns the first result, marked Deduplicated. A real
// adapter keeps the keys in its request ledger (Ledger.ExecuteOnce), which
// survives a restart; this map does not.
func (s *projects) Execute(_ context.Context, _ adapter.Principal, call adapter.Call) (adapter.Result, error) {
	if first, ok := s.applied[call.IdempotencyKey]; ok {
		first.Deduplicated = true
		return first, nil
	}
	var args struct {
		ProjectID string `json:"project_id"`
		Name      string `json:"name"`
	}
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return adapter.Result{}, &adapter.Error{Code: "invalid_arguments", Message: err.Error(), Outcome: adapter.Refused}
	}
	s.names[args.ProjectID] = args.Name
	res := adapter.Result{Reference: "rename_" + call.IdempotencyKey}
	s.applied[call.IdempotencyKey] = res
	return res, nil
}

// Verify reads the project again: only the new name found there counts.
func (s *projects) Verify(_ context.Context, _ adapter.Principal, call adapter.Call, _ *adapter.Result) (adapter.Verification, error) {
	want := call.Quote.Lines[0].To
	got := s.names[call.Quote.Target.ID]
	return adapter.Verification{Verified: got == want, Evidence: fmt.Sprintf("the project is named %q", got), At: time.Now()}, nil
}

// Lookup says what the system knows of a call by its key, read-only.
func (s *projects) Lookup(_ context.Context, _ adapter.Principal, call adapter.Call) (adapter.LookupResult, error) {
	res, ok := s.applied[call.IdempotencyKey]
	if !ok {
		return adapter.LookupResult{Found: false}, nil
	}
	return adapter.LookupResult{Found: true, LedgerState: "applied", Result: &res}, nil
}

func (s *projects) Read(context.Context, adapter.Principal, string, json.RawMessage) (adapter.ReadResult, error) {
	return adapter.ReadResult{}, &adapter.Error{Code: "no_read_tools", Message: "This system has no read tools.", Outcome: adapter.Refused}
}

// Example shows the contract every business system implements, in the
// order the console uses it: a dry run makes the quote a person decides
// on; the call carries the confirmed quote and one idempotency key for
// every attempt, so a retry sends nothing; Verify reads the change back;
// Lookup tells what became of a call whose answer was lost.
func Example() {
	var sys adapter.System = &projects{names: map[string]string{"p1": "Website"}, applied: map[string]adapter.Result{}}
	ctx, customer := context.Background(), adapter.Principal{CustomerRef: "ada@example.com"}

	args := json.RawMessage(`{"project_id": "p1", "name": "Website 2027"}`)
	quote, err := sys.DryRun(ctx, customer, "rename_project", args)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("quote: %s (%s → %s)\n", quote.Title, quote.Lines[0].From, quote.Lines[0].To)

	call := adapter.Call{Action: "rename_project", Args: args, IdempotencyKey: "inv_1", Quote: quote}
	first, _ := sys.Execute(ctx, customer, call)
	again, _ := sys.Execute(ctx, customer, call)
	fmt.Println("executed:", first.Reference, "deduplicated:", first.Deduplicated)
	fmt.Println("retried:", again.Reference, "deduplicated:", again.Deduplicated)

	v, _ := sys.Verify(ctx, customer, call, &first)
	fmt.Println("verified:", v.Verified, "-", v.Evidence)

	lost, _ := sys.Lookup(ctx, customer, adapter.Call{Action: "rename_project", IdempotencyKey: "inv_2"})
	fmt.Println("lookup of a call never sent: found", lost.Found)

	_, err = sys.DryRun(ctx, customer, "rename_project", json.RawMessage(`{"project_id": "p9", "name": "X"}`))
	fmt.Println("dry run of an unknown project:", err)
	// Output:
	// quote: Rename Website (Website → Website 2027)
	// executed: rename_inv_1 deduplicated: false
	// retried: rename_inv_1 deduplicated: true
	// verified: true - the project is named "Website 2027"
	// lookup of a call never sent: found false
	// dry run of an unknown project: not_found: No project "p9" for this customer.
}
