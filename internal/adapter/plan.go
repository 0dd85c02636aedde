package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
)

// Plan is a fully validated write: the quote a person confirms, and the
// request (or requests) that carry it out with the call's idempotency key.
// An adapter's plan function builds it from fresh reads and changes nothing.
type Plan struct {
	Quote Quote
	Send  func(ctx context.Context, key string) (Result, error)
}

// FindAction finds the action called name among defs (spec gives each
// one's contract) and validates raw arguments against it. An action the
// system does not have fails with CodeUnknownAction; arguments that do not
// fit fail as Validate says.
func FindAction[D any](system string, defs []D, spec func(D) ActionSpec, name string, raw json.RawMessage) (D, map[string]any, error) {
	var zero D
	i := slices.IndexFunc(defs, func(d D) bool { return spec(d).Name == name })
	if i < 0 {
		return zero, nil, &Error{Code: CodeUnknownAction, Outcome: Refused,
			Message: fmt.Sprintf("System %q has no action %q.", system, name),
			Hint:    "List the tools to see the actions this assistant may use."}
	}
	s := spec(defs[i])
	args, err := s.Validate(raw)
	if err != nil {
		return zero, nil, err
	}
	return defs[i], args, nil
}

// Specs lists what spec gives for each of defs, in order: an adapter's
// Actions and ReadTools.
func Specs[D, S any](defs []D, spec func(D) S) []S {
	out := make([]S, 0, len(defs))
	for _, d := range defs {
		out = append(out, spec(d))
	}
	return out
}

// CheckQuote compares the confirmed quote with the one planned afresh
// before a write is sent. A confirmed quote without a target (or without a
// version, when needVersion is set) is invalid; a different system, target,
// version or basis (the values verify.expect compares with) is refused with CodeStaleTarget, and nothing is sent.
func CheckQuote(confirmed, fresh Quote, needVersion bool) error {
	if confirmed.Target.ID == "" {
		return Invalid(map[string]string{"quote": "the confirmed dry-run quote, with its target, is required"})
	}
	if needVersion && confirmed.Target.Version == "" {
		return Invalid(map[string]string{"quote": "the confirmed dry-run quote, with its target and version, is required"})
	}
	stale := func(msg string) error {
		return &Error{Code: CodeStaleTarget, Outcome: Refused, Message: msg,
			Hint: "Nothing was sent. Preview the action again and have the new quote confirmed."}
	}
	if confirmed.Target.System != "" && confirmed.Target.System != fresh.Target.System {
		return stale(fmt.Sprintf("The confirmed quote is for system %q, not %q.", confirmed.Target.System, fresh.Target.System))
	}
	if confirmed.Target.ID != fresh.Target.ID {
		return stale(fmt.Sprintf("The arguments now name %s, but the confirmed quote was for %s.", fresh.Target.Display, confirmed.Target.Display))
	}
	if confirmed.Target.Version != fresh.Target.Version {
		return stale(fmt.Sprintf("%s changed since the preview (version %s, now %s).", fresh.Target.Display, confirmed.Target.Version, fresh.Target.Version))
	}
	// The values a verification compares with (before) are the confirmed
	// ones: when the target's differ now, the check would compare with a
	// state the write did not start from.
	if (confirmed.Basis != nil || fresh.Basis != nil) && !sameJSON(confirmed.Basis, fresh.Basis) {
		return stale(fmt.Sprintf("%s changed since the preview.", fresh.Target.Display))
	}
	return nil
}

// sameJSON says whether a and b encode to the same JSON (a stored quote's
// numbers are float64, a fresh one's int64).
func sameJSON(a, b map[string]any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// Planner is what DryRun and Execute need from an adapter for one call:
// the system's name, its ledger and logger, and plan, which validates the
// action completely from fresh reads and changes nothing.
type Planner struct {
	System string
	Ledger *Ledger
	Log    *slog.Logger
	// NeedVersion refuses a confirmed quote without a target version.
	NeedVersion bool
	// KeepFailed, optional, says which failed results the ledger keeps
	// (see ExecuteOnce).
	KeepFailed func(Result) bool
}

// DryRun plans the call and returns its quote, the one a person confirms,
// or the plan's refusal. Nothing is sent and the ledger is not read.
func (p Planner) DryRun(ctx context.Context, plan func(context.Context) (Plan, error)) (Quote, error) {
	pl, err := plan(ctx)
	if err != nil {
		return Quote{}, err
	}
	return pl.Quote, nil
}

// Execute carries out a confirmed call once per idempotency key through
// the ledger (see ExecuteOnce): a key seen before is answered from the
// ledger; otherwise plan runs again from fresh reads, a quote that differs
// from call.Quote is refused by CheckQuote, the key is claimed, the plan's
// Send runs with the key, its result's data is given the shape the ledger
// stores (so a replay equals the first answer), and the outcome is
// recorded. args are the call's validated arguments.
func (p Planner) Execute(ctx context.Context, call Call, args map[string]any, plan func(context.Context) (Plan, error)) (Result, error) {
	return p.Ledger.ExecuteOnce(ctx, p.System, call, Canonical(args), p.Log, func(ctx context.Context) (Prepared, error) {
		pl, err := plan(ctx)
		if err == nil {
			err = CheckQuote(call.Quote, pl.Quote, p.NeedVersion)
		}
		if err != nil {
			return Prepared{}, err
		}
		return Prepared{TargetID: pl.Quote.Target.ID, Send: func(ctx context.Context, key string) (Result, error) {
			res, err := pl.Send(ctx, key)
			res.Data = asStored(res.Data)
			return res, err
		}}, nil
	}, p.KeepFailed)
}

// asStored gives result data the shape it has after the ledger stored it
// (numbers as float64, no empty map), so a replayed result equals the
// first one.
func asStored(data map[string]any) map[string]any {
	if len(data) == 0 {
		return nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return data
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return data
	}
	return out
}

// Writes is an adapter's write verbs with the kit around them. Given each
// action's contract (Spec) and its plan (Plan, which reads but changes
// nothing and returns the quote and the Send that carries it out), it
// answers the System's Actions, DryRun and Execute, so an adapter writes
// only its actions' plans, sends and Verify.
type Writes[D any] struct {
	Planner
	Defs []D
	Spec func(D) ActionSpec
	Plan func(ctx context.Context, d D, p Principal, args map[string]any) (Plan, error)
}

// Find finds an action by name and validates raw arguments against it, as
// FindAction does.
func (w Writes[D]) Find(name string, raw json.RawMessage) (D, map[string]any, error) {
	return FindAction(w.System, w.Defs, w.Spec, name, raw)
}

// Specs lists the actions' contracts, for the System's Actions.
func (w Writes[D]) Specs() []ActionSpec { return Specs(w.Defs, w.Spec) }

// DryRun validates the action completely and returns its quote: an unknown
// action or bad arguments are refused as Find says, and a plan's refusal
// is returned as it is. Nothing is sent.
func (w Writes[D]) DryRun(ctx context.Context, p Principal, action string, raw json.RawMessage) (Quote, error) {
	d, args, err := w.Find(action, raw)
	if err != nil {
		return Quote{}, err
	}
	return w.Planner.DryRun(ctx, func(ctx context.Context) (Plan, error) { return w.Plan(ctx, d, p, args) })
}

// Execute carries out a confirmed call once per idempotency key, as
// Planner.Execute does, after Find has validated it.
func (w Writes[D]) Execute(ctx context.Context, p Principal, call Call) (Result, error) {
	d, args, err := w.Find(call.Action, call.Args)
	if err != nil {
		return Result{}, err
	}
	return w.Planner.Execute(ctx, call, args, func(ctx context.Context) (Plan, error) { return w.Plan(ctx, d, p, args) })
}
