package conformance

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"countersign/internal/adapter"
)

// Check is one check of the suite, named for what it checks.
type Check struct {
	Name string
	run  func(t T, e *Env)
}

// Checks lists every check of the suite, in the order RunLive runs them.
func Checks() []Check {
	return []Check{
		{"specs", checkSpecs},
		{"resolve", checkResolve},
		{"ambiguity", checkAmbiguity},
		{"foreign_object", checkForeign},
		{"dry_run_without_side_effect", checkDryRun},
		{"dry_run_refusal", checkRefusedDryRun},
		{"execute_once_per_key", checkExecuteOnce},
		{"verify_by_read_back", checkVerify},
		{"lookup", checkLookup},
		{"fault_5xx_is_unknown", checkFault(FaultServerError, false)},
		{"fault_reset_is_unknown", checkFault(FaultReset, false)},
		{"fault_drop_after_commit_is_unknown_and_found", checkFault(FaultDropAfterCommit, true)},
		{"dial_failure_is_not_sent", checkDialFailure},
		{"refusal_4xx_is_refused", checkRefusal},
		{"no_internal_fields", checkNoInternalFields},
		{"every_argument_shows_in_the_quote", checkEveryArgumentShows},
		{"hidden_characters_refused", checkHiddenCharactersRefused},
		{"path_arguments_stay_in_place", checkPathArgumentsStayInPlace},
	}
}

// Run runs check c against e; every idempotency key it uses starts with
// keys ("conformance" in a Go test's fresh backend; a live run's must be
// new to the system).
func (e *Env) Run(t T, c Check, keys string) {
	e.keys = keys
	e.tr.mode = pass
	c.run(t, e)
}

// checkSpecs: every action and read tool is described completely.
func checkSpecs(t T, e *Env) {
	if e.System.Name() == "" {
		t.Error("the system has no name")
	}
	for _, a := range e.System.Actions() {
		if a.Name == "" || a.Title == "" || a.Description == "" || a.Guidance == "" {
			t.Errorf("action %q lacks a name, title, description or guidance", a.Name)
		}
		if a.Risk != adapter.Reversible && a.Risk != adapter.Irreversible {
			t.Errorf("action %s: risk %q", a.Name, a.Risk)
		}
		if !slices.Contains([]int{0, 3, 4, 5}, a.DefaultStage) {
			t.Errorf("action %s: default stage %d; want 3, 4, 5 or zero (3)", a.Name, a.DefaultStage)
		}
		if !slices.ContainsFunc(a.Params, func(p adapter.Param) bool { return p.Name == a.TargetParam }) {
			t.Errorf("action %s: target param %q is not a parameter", a.Name, a.TargetParam)
		}
		if _, err := json.Marshal(a.Schema()); err != nil {
			t.Errorf("action %s: schema: %v", a.Name, err)
		}
	}
	for _, r := range e.System.ReadTools() {
		if r.Name == "" || r.Description == "" {
			t.Errorf("read tool %q lacks a name or description", r.Name)
		}
	}
}

// checkResolve: the principal's object resolves to one target of this
// system, with a display and the same id when resolved by id.
func checkResolve(t T, e *Env) {
	r := e.fix.Resolve
	got, err := e.System.Resolve(ctx(t), e.fix.Principal, r.Kind, r.Ref)
	if err != nil {
		t.Fatalf("resolve %s %q: %v", r.Kind, r.Ref, err)
	}
	if got.System != e.System.Name() || got.ID == "" || got.Display == "" || got.Kind != r.Kind {
		t.Errorf("resolve %s %q = %+v, want a %s of system %s with id and display", r.Kind, r.Ref, got, r.Kind, e.System.Name())
	}
	if r.WantID != "" && got.ID != r.WantID {
		t.Errorf("resolve %s %q = %s, want %s", r.Kind, r.Ref, got.ID, r.WantID)
	}
	again, err := e.System.Resolve(ctx(t), e.fix.Principal, r.Kind, got.ID)
	if err != nil || again.ID != got.ID || again.Version != got.Version {
		t.Errorf("resolve by id %s = %+v, %v; want the same object", got.ID, again, err)
	}
}

// checkAmbiguity: a reference matching several objects is refused with
// the candidates; nothing is picked.
func checkAmbiguity(t T, e *Env) {
	r := e.fix.Ambiguous
	_, err := e.System.Resolve(ctx(t), e.fix.Principal, r.Kind, r.Ref)
	ae := wantError(t, err, adapter.CodeAmbiguous, adapter.Refused)
	if len(ae.Candidates) < 2 || ae.Hint == "" {
		t.Errorf("ambiguous %q: %d candidates, hint %q; want at least 2 and a hint", r.Ref, len(ae.Candidates), ae.Hint)
	}
	for _, c := range ae.Candidates {
		if c.ID == "" || c.Display == "" {
			t.Errorf("candidate %+v lacks an id or display", c)
		}
	}
}

// checkForeign: another customer's object is not found, exactly like a
// missing one.
func checkForeign(t T, e *Env) {
	r := e.fix.Foreign
	theirs, err := e.System.Resolve(ctx(t), e.fix.Other, r.Kind, r.Ref)
	if err != nil {
		t.Fatalf("resolve %q for the other customer: %v", r.Ref, err)
	}
	_, err = e.System.Resolve(ctx(t), e.fix.Principal, r.Kind, theirs.ID)
	wantError(t, err, adapter.CodeNotFound, adapter.Refused)
}

// checkDryRun: a dry run changes nothing in the backend and gives a
// complete quote, the same twice.
func checkDryRun(t T, e *Env) {
	before := e.Effects(t, "")
	call := e.dryRun(t, e.fix.Write, "unused")
	again := e.dryRun(t, e.fix.Write, "unused")
	if after := e.Effects(t, ""); after != before {
		t.Errorf("the backend recorded %d effects during dry runs", after-before)
	}
	q := call.Quote
	if q.Title == "" || q.Target.ID == "" || q.Target.System != e.System.Name() || len(q.Lines) == 0 ||
		q.ConfirmLabel == "" || q.DeclineLabel == "" || len(q.Consequences) == 0 {
		t.Errorf("quote %+v lacks a title, target, lines, consequences or labels", q)
	}
	// A quote effective now is effective at its dry run: on a live clock
	// the two differ by the time between them.
	second := again.Quote
	if q.EffectiveAt != nil && second.EffectiveAt != nil && second.EffectiveAt.Sub(*q.EffectiveAt).Abs() < time.Minute {
		second.EffectiveAt = q.EffectiveAt
	}
	a, _ := json.Marshal(q)
	b, _ := json.Marshal(second)
	if string(a) != string(b) {
		t.Errorf("two dry runs differ:\n%s\n%s", a, b)
	}
}

// checkRefusedDryRun: a refusal is Refused with a code and hint, and
// records nothing.
func checkRefusedDryRun(t T, e *Env) {
	before := e.Effects(t, "")
	c := e.fix.Refused
	_, err := e.System.DryRun(ctx(t), principal(e.fix, c), c.Action, raw(t, c.Args))
	ae := wantError(t, err, "", adapter.Refused)
	if ae.Code == "" || ae.Hint == "" {
		t.Errorf("refusal %+v lacks a code or hint", ae)
	}
	if after := e.Effects(t, ""); after != before {
		t.Errorf("the backend recorded %d effects for a refused dry run", after-before)
	}
}

// execute dry-runs and executes the fixture's write with key.
func (e *Env) execute(t T, key string) (adapter.Call, adapter.Result, error) {
	t.Helper()
	call := e.dryRun(t, e.fix.Write, key)
	res, err := e.System.Execute(ctx(t), principal(e.fix, e.fix.Write), call)
	return call, res, err
}

// checkExecuteOnce: one effect per key; a repeat sends nothing and
// replays the first result, marked deduplicated.
func checkExecuteOnce(t T, e *Env) {
	before := e.Effects(t, "")
	call, first, err := e.execute(t, e.key("1"))
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	if first.Reference == "" || first.Deduplicated {
		t.Errorf("first result %+v: want a reference, not deduplicated", first)
	}
	again, err := e.System.Execute(ctx(t), principal(e.fix, e.fix.Write), call)
	if err != nil {
		t.Fatalf("repeat: %v", err)
	}
	if !again.Deduplicated || again.Reference != first.Reference {
		t.Errorf("repeat %+v: want the first result (%s) marked deduplicated", again, first.Reference)
	}
	if n := e.Effects(t, e.key("1")); n != 1 {
		t.Errorf("the backend recorded %d effects under the key, want 1", n)
	}
	if n := e.Effects(t, "") - before; n != 1 {
		t.Errorf("the backend recorded %d effects in all, want 1", n)
	}
}

// checkVerify: the change is found by reading back.
func checkVerify(t T, e *Env) {
	call, res, err := e.execute(t, e.key("1"))
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	v, err := e.System.Verify(ctx(t), principal(e.fix, e.fix.Write), call, &res)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Verified || v.Evidence == "" || v.At.IsZero() {
		t.Errorf("verification %+v: want verified with evidence and a time", v)
	}
}

// checkLookup: an earlier call is found by its key with its result; an
// unknown key is reported as not found, not as nothing having happened.
func checkLookup(t T, e *Env) {
	call, res, err := e.execute(t, e.key("1"))
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	look, err := e.System.Lookup(ctx(t), principal(e.fix, e.fix.Write), call)
	if err != nil {
		t.Fatal(err)
	}
	if !look.Found || look.LedgerState != "applied" || look.Result == nil || look.Result.Reference != res.Reference {
		t.Errorf("lookup %+v: want the applied call with reference %s", look, res.Reference)
	}
	call.IdempotencyKey = e.key("never-sent")
	look, err = e.System.Lookup(ctx(t), principal(e.fix, e.fix.Write), call)
	if err != nil {
		t.Fatal(err)
	}
	if look.Found || look.Result != nil || len(look.Effects) != 0 {
		t.Errorf("lookup of a key never sent: %+v, want nothing found", look)
	}
}

// checkFault: a write whose answer is lost is Unknown, not retryable, and
// never re-sent; Lookup reports the unknown call, and when the backend
// committed it, its effect and result, which Verify confirms.
func checkFault(f Fault, committed bool) func(t T, e *Env) {
	return func(t T, e *Env) {
		e.Fault(t, f)
		call, _, err := e.execute(t, e.key("1"))
		if ae := wantError(t, err, "", adapter.Unknown); ae.Retryable || ae.PolicyRefusal {
			t.Errorf("an unknown outcome must not be retryable or a policy refusal: %+v", ae)
		}
		p := principal(e.fix, e.fix.Write)
		look, err := e.System.Lookup(ctx(t), p, call)
		if err != nil {
			t.Fatal(err)
		}
		if !look.Found || look.LedgerState != "unknown" {
			t.Errorf("lookup %+v: want the call, in state unknown", look)
		}
		want := 0
		if committed {
			want = 1
			if len(look.Effects) == 0 || look.Result == nil || look.Result.Reference == "" {
				t.Errorf("lookup %+v: want the committed effect and a result rebuilt from it", look)
			}
			v, err := e.System.Verify(ctx(t), p, call, nil)
			if err != nil || !v.Verified {
				t.Errorf("verify from the evidence: %+v, %v", v, err)
			}
		} else if len(look.Effects) != 0 || look.Result != nil {
			t.Errorf("lookup %+v: the backend applied nothing", look)
		}
		_, err = e.System.Execute(ctx(t), p, call)
		wantError(t, err, "", adapter.Unknown)
		if n := e.Effects(t, e.key("1")); n != want {
			t.Errorf("the backend recorded %d effects under the key, want %d", n, want)
		}
	}
}

// checkDialFailure: a write that could not even be dialled is NotSent and
// retryable, and nothing happened.
func checkDialFailure(t T, e *Env) {
	call := e.dryRun(t, e.fix.Write, e.key("1"))
	e.tr.mode = dialDead
	_, err := e.System.Execute(ctx(t), principal(e.fix, e.fix.Write), call)
	e.tr.mode = pass
	if ae := wantError(t, err, "", adapter.NotSent); !ae.Retryable {
		t.Errorf("a write that never left must be retryable: %+v", ae)
	}
	if n := e.Effects(t, e.key("1")); n != 0 {
		t.Errorf("the backend recorded %d effects, want none", n)
	}
}

// checkRefusal: the system's 4xx answer to a write is Refused with the
// mapped code; a bare status never reaches the caller.
func checkRefusal(t T, e *Env) {
	call := e.dryRun(t, e.fix.Write, e.key("1"))
	e.tr.mode = refuse
	_, err := e.System.Execute(ctx(t), principal(e.fix, e.fix.Write), call)
	e.tr.mode = pass
	ae := wantError(t, err, e.fix.Refusal.WantCode, adapter.Refused)
	if ae.Hint == "" {
		t.Errorf("refusal %+v has no hint", ae)
	}
	look, err := e.System.Lookup(ctx(t), principal(e.fix, e.fix.Write), call)
	if err != nil || look.LedgerState != "refused" {
		t.Errorf("lookup %+v, %v: want the call recorded as refused", look, err)
	}
}

// checkNoInternalFields: nothing the adapter returns — read tools,
// quotes, results, verifications, lookups, errors — names an internal field.
func checkNoInternalFields(t T, e *Env) {
	var answers []any
	for _, r := range e.fix.Reads {
		res, err := e.System.Read(ctx(t), e.fix.Principal, r.Tool, raw(t, r.Args))
		if err != nil {
			t.Errorf("read %s: %v", r.Tool, err)
			continue
		}
		if list, ok := res.Data.([]any); ok && len(list) != res.Count {
			t.Errorf("read %s: count %d for %d items", r.Tool, res.Count, len(list))
		}
		answers = append(answers, res)
	}
	call, res, err := e.execute(t, e.key("1"))
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	p := principal(e.fix, e.fix.Write)
	v, _ := e.System.Verify(ctx(t), p, call, &res)
	look, _ := e.System.Lookup(ctx(t), p, call)
	_, refusal := e.System.DryRun(ctx(t), principal(e.fix, e.fix.Refused), e.fix.Refused.Action, raw(t, e.fix.Refused.Args))
	_, ambiguous := e.System.Resolve(ctx(t), e.fix.Principal, e.fix.Ambiguous.Kind, e.fix.Ambiguous.Ref)
	answers = append(answers, call.Quote, res, v, look, refusal, ambiguous)
	for _, a := range answers {
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ToLower(string(b))
		if ae, ok := a.(*adapter.Error); ok && ae != nil {
			text += strings.ToLower(ae.Message + ae.Hint)
		}
		for _, f := range e.fix.Forbidden {
			if strings.Contains(text, strings.ToLower(f)) {
				t.Errorf("an answer names the internal field %q: %s", f, b)
			}
		}
	}
}
