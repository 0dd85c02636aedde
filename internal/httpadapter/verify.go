package httpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/money"
)

// Verify reads the target again with the action's verify path; the object,
// or one element of the array at verify.items, must have every field the
// file names with the expected value. result may be nil (after an unknown
// outcome): the reference then comes from the system's evidence for the
// key. It fails only when the system cannot be read.
func (a *Adapter) Verify(ctx context.Context, p adapter.Principal, call adapter.Call, result *adapter.Result) (adapter.Verification, error) {
	act, args, err := a.action(call.Action, call.Args)
	if err != nil {
		return adapter.Verification{}, err
	}
	ref := call.Quote.Target.ID
	if ref == "" {
		ref, _ = args[act.spec.TargetParam].(string)
	}
	o, target, account, err := a.resolve(ctx, p, act.target, ref)
	if err != nil {
		return adapter.Verification{}, err
	}
	res := result
	if res == nil || res.Reference == "" {
		look, err := a.Lookup(ctx, p, call)
		if err != nil {
			return adapter.Verification{}, err
		}
		res = look.Result
		if res == nil {
			res = &adapter.Result{}
		}
	}
	vars := map[string]any{"args": args, "target": o, "account": account, "now": a.now(), "key": call.IdempotencyKey,
		"principal": adapter.NormaliseCustomerRef(p.CustomerRef),
		"result":    map[string]any{"reference": res.Reference, "data": normalise(jsonRoundTrip(res.Data))}}
	computed := map[string]any{}
	vars["vars"] = computed
	for _, v := range act.vars {
		val, err := v.expr.eval(vars)
		if err != nil {
			return adapter.Verification{}, a.broken(err)
		}
		computed[v.name] = val
	}
	answer, said, err := a.fetch(ctx, act.verify.path, act.verify.gql, vars)
	if err != nil {
		return adapter.Verification{}, err
	}
	candidates := []any{answer}
	if act.verify.items != "" {
		list, _ := lookupPointer(answer, act.verify.items)
		candidates, _ = list.([]any)
	}
	want := map[string]any{}
	ptrs := make([]string, 0, len(act.verify.fields))
	for ptr, e := range act.verify.fields {
		v, err := e.eval(vars)
		if err != nil {
			return adapter.Verification{}, a.broken(err)
		}
		want[ptr] = v
		ptrs = append(ptrs, ptr)
	}
	slices.Sort(ptrs)
	expect := act.verify.expect
	if expect != nil {
		if len(act.verify.beforeRefs) > 0 && call.Quote.Basis == nil {
			return adapter.Verification{Verified: false, At: a.now(),
				Evidence: fmt.Sprintf("The values of %s before the write are not in the call's quote, so %s cannot be checked; a person checks the change.",
					target.Display, expect.src)}, nil
		}
		vars["before"] = normalise(jsonRoundTrip(call.Quote.Basis))
	}
	checked := strings.Join(ptrs, ", ")
	if expect != nil {
		checked = strings.TrimPrefix(checked+", "+expect.src, ", ")
	}
	var observed map[string]any
	var mismatch []string
	for _, c := range candidates {
		got := map[string]any{}
		var bad []string
		for _, ptr := range ptrs {
			v, _ := lookupPointer(c, ptr)
			got[ptr] = v
			if !sameJSON(v, want[ptr]) {
				bad = append(bad, fmt.Sprintf("%s is %s, not %s", ptr, jsonText(v), jsonText(want[ptr])))
			}
		}
		if len(bad) == 0 && expect != nil {
			vars["after"] = c
			for _, ptr := range act.verify.afterRefs {
				got[ptr], _ = lookupPointer(c, ptr)
			}
			ok, err := expect.bool(vars)
			if err != nil {
				return adapter.Verification{}, a.broken(err)
			}
			if !ok {
				bad = append(bad, expect.src+" does not hold")
			}
		}
		if len(bad) == 0 {
			return adapter.Verification{Verified: true, At: a.now(), Observed: got,
				Evidence: fmt.Sprintf("Read %s again (%s): %s as expected.", target.Display, said, checked)}, nil
		}
		if observed == nil {
			observed, mismatch = got, bad
		}
	}
	evidence := fmt.Sprintf("Read %s again (%s): ", target.Display, said)
	switch {
	case len(candidates) == 0:
		evidence += "nothing to compare; the change is not there."
	case len(candidates) > 1:
		evidence += fmt.Sprintf("none of %d entries has %s as expected.", len(candidates), checked)
	default:
		evidence += strings.Join(mismatch, "; ") + "."
	}
	return adapter.Verification{Verified: false, At: a.now(), Observed: observed, Evidence: evidence}, nil
}

func jsonRoundTrip(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	out, err := decodeJSON(b)
	if err != nil {
		return v
	}
	return out
}

func sameJSON(a, b any) bool {
	return reflect.DeepEqual(normalise(jsonRoundTrip(a)), normalise(jsonRoundTrip(b)))
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// Lookup inspects an earlier call by its key, read-only towards the
// system: the request ledger's entry and the system's effects recorded
// under the key (when the file names where they are). Without a ledger
// result, an effect the action's evidence recognises gives the result. A
// missing record is Found false with no effects, which is not proof that
// nothing happened — except in an authoritative record (effects
// "authoritative"), where no effect under the key settle_after after an
// unknown call is reported as NotApplied (notApplied) for reconcile to
// settle; Lookup itself writes nothing.
func (a *Adapter) Lookup(ctx context.Context, _ adapter.Principal, call adapter.Call) (adapter.LookupResult, error) {
	act, _, err := a.action(call.Action, call.Args)
	if err != nil {
		return adapter.LookupResult{}, err
	}
	out, err := a.ledger.Lookup(ctx, a.name, call.IdempotencyKey)
	if err != nil {
		return adapter.LookupResult{}, err
	}
	if a.effects == nil {
		return out, nil
	}
	items, _, isList, err := a.fetchList(ctx, a.effects.path, a.effects.gql, map[string]any{"key": call.IdempotencyKey},
		a.effects.items, a.effects.paging, 0)
	if err != nil {
		return adapter.LookupResult{}, err
	}
	field := func(it any, ptr string) string {
		if ptr == "" {
			return ""
		}
		v, _ := lookupPointer(it, ptr)
		return text(v)
	}
	if isList && len(items) == 0 && a.effects.authoritative {
		// Only an answer that is the record's list, and empty, says
		// nothing is there; a missing or malformed list says nothing.
		out.NotApplied = a.notApplied(out)
	}
	for _, it := range items {
		e := adapter.Effect{ID: field(it, a.effects.id), Kind: field(it, a.effects.kind), Object: field(it, a.effects.object)}
		if at := field(it, a.effects.at); at != "" {
			var ok bool
			if e.At, ok = effectTime(at); !ok {
				a.log.WarnContext(ctx, "httpadapter: an effect's time is in no format the adapter reads; it is left out",
					"system", a.name, "file", a.file, "pointer", a.effects.at, "value", at)
			}
		}
		a.effectAmount(ctx, &e, it)
		out.Effects = append(out.Effects, e)
		if out.Result != nil || act.evidence == nil {
			continue
		}
		vars := map[string]any{"effect": it, "key": call.IdempotencyKey}
		ok, err := act.evidence.match.bool(vars)
		if err != nil || !ok {
			continue
		}
		if ref, err := act.evidence.reference.render(vars, false); err == nil && ref != "" {
			out.Result = &adapter.Result{Reference: ref, AmountCents: e.AmountCents, Currency: e.Currency,
				Steps: []adapter.Step{{Name: act.spec.Name, Outcome: "applied", Detail: e.Object}}}
		}
	}
	return out, nil
}

// notApplied is adapter.NotApplied with the file's settle time, for an
// answer that is the record's list and holds no effect under the key.
func (a *Adapter) notApplied(out adapter.LookupResult) *adapter.Error {
	who := a.title
	if who == "" {
		who = a.name
	}
	return adapter.NotApplied(out, a.now(), a.effects.settleAfter, who)
}

// effectLayouts are the timestamp forms an effect's "at" may take: RFC
// 3339 with a T or a space between date and time (PostgreSQL's text form),
// with or without fractions, with a zone or without one (UTC).
var effectLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z07",
	"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"}

// effectTime reads an effect's time: one of effectLayouts, or a Unix time
// in seconds (to the microsecond) or, when it is that large, milliseconds.
func effectTime(s string) (time.Time, bool) {
	for _, l := range effectLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil && n > 0 {
		if n > 1e12 {
			return time.UnixMilli(int64(n)).UTC(), true
		}
		sec, frac := math.Modf(n)
		return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3).UTC(), true // to the microsecond a float holds
	}
	return time.Time{}, false
}

// effectAmount reads the effect's amount and currency where the file's
// effects say, so that a person compares what the system recorded with
// what was asked. A value that is not a number is left out and logged.
func (a *Adapter) effectAmount(ctx context.Context, e *adapter.Effect, it any) {
	if a.effects.amount == "" {
		return
	}
	if a.effects.currency != "" {
		v, _ := lookupPointer(it, a.effects.currency)
		e.Currency = strings.ToUpper(text(v))
	}
	v, found := lookupPointer(it, a.effects.amount)
	if !found || v == nil {
		return
	}
	cents, err := toCents(v, a.effects.major, e.Currency)
	if err != nil {
		a.log.WarnContext(ctx, "httpadapter: an effect's amount is left out: "+err.Error(),
			"system", a.name, "pointer", a.effects.amount, "value", v)
		return
	}
	e.AmountCents = &cents
}

// toCents reads an amount in minor units, or in whole units when major
// is set (12.5, "12.50"), as the currency's minor units: 12.5 US dollars
// are 1250 cents, 4210 yen stay 4210 (no minor units), 1.234 dinars are
// 1234 fils. A whole-unit amount finer than its currency's minor unit
// (42.5 yen) is refused, not rounded away.
func toCents(v any, major bool, currency string) (int64, error) {
	scale := int64(1)
	if major {
		for range money.Digits(currency) {
			scale *= 10
		}
	}
	switch x := v.(type) {
	case int64:
		return x * scale, nil
	case float64:
		if !major {
			return 0, fmt.Errorf("an amount in minor units is not a whole number")
		}
		return wholeMinor(x, scale, currency)
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return 0, fmt.Errorf("the amount is not a number")
		}
		return wholeMinor(f, scale, currency)
	}
	return 0, fmt.Errorf("the amount is a %T, not a number", v)
}

// wholeMinor is f main units in minor units (scale of them to the unit);
// float noise below a thousandth of a minor unit is rounded away, a real
// fraction of one is an error.
func wholeMinor(f float64, scale int64, currency string) (int64, error) {
	m := f * float64(scale)
	r := math.Round(m)
	if math.Abs(m-r) > 1e-3 {
		return 0, fmt.Errorf("%v has more decimals than %s has minor units (%d)", f, strings.ToUpper(currency), money.Digits(currency))
	}
	return int64(r), nil
}

// effectsAmount reads where an effect keeps its amount and currency.
func (c *compiler) effectsAmount(e *effectsLookup, d *EffectsLookup) {
	e.amount, e.currency, e.major = d.Amount, d.Currency, d.AmountUnit == "major"
	e.paging = c.paging("/effects/paging", d.Paging)
	if d.Amount == "" && (d.AmountUnit != "" || d.Currency != "") {
		c.fail("/effects/amount", "amount_unit and currency describe an amount, and the file names none",
			`add "amount": a JSON Pointer to the effect's amount, e.g. "/data/amount_cents"`)
	}
}

// verifyExpect compiles verify.expect, a condition over before, after and
// args, and records which fields of before it reads: those are kept in the
// quote's basis at the dry run. A use of before as a whole is refused, so
// that the basis holds only what the condition names.
func (c *compiler) verifyExpect(ptr, src string, v *verifyTemplate) {
	if src == "" {
		return
	}
	v.expect = c.expr(ptr, src)
	if v.expect == nil {
		return
	}
	for _, r := range refsOf(v.expect.tree, "before") {
		if len(r) < 2 {
			c.fail(ptr, "expect reads before as a whole; it may read only named fields of it",
				"name the fields the condition compares, e.g. before.balance_cents")
			return
		}
		v.beforeRefs = append(v.beforeRefs, r[1:])
	}
	for _, r := range refsOf(v.expect.tree, "after") {
		if len(r) > 1 {
			v.afterRefs = append(v.afterRefs, pointer(r[1:]...))
		}
	}
	if exprUses(v.expect.tree, "before") && len(v.beforeRefs) == 0 {
		c.fail(ptr, "expect reads before in a way whose fields cannot be named", "name the fields, e.g. before.balance_cents")
	}
	// A condition that never reads what was read back holds whatever the
	// write did, so every write would be completed.
	if !exprUses(v.expect.tree, "after") {
		c.fail(ptr, "expect never reads after (what verify reads back), so it would hold whether or not the write landed",
			"compare a field of after with what the write should have made it, e.g. after.balance_cents == before.balance_cents - args.amount_cents")
	}
}
