package httpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"countersign/internal/adapter"
)

// plan is a validated action against a fresh read of its target: the
// quote, and the variables its request is rendered from.
type plan struct {
	quote adapter.Quote
	vars  map[string]any
}

func (a *Adapter) action(name string, raw json.RawMessage) (*action, map[string]any, error) {
	return a.writes().Find(name, raw)
}

// plan resolves the target from the principal's own objects, evaluates the
// vars, applies every guard, asks the system's dry-run endpoint when the
// file names one, and builds the quote.
func (a *Adapter) plan(ctx context.Context, p adapter.Principal, act *action, args map[string]any) (*plan, error) {
	ref, _ := args[act.spec.TargetParam].(string)
	o, target, account, err := a.resolve(ctx, p, act.target, ref)
	if err != nil {
		return nil, err
	}
	computed := map[string]any{}
	vars := map[string]any{"args": args, "target": o, "account": account, "vars": computed, "now": a.now(),
		"principal": adapter.NormaliseCustomerRef(p.CustomerRef)}
	for _, v := range act.vars {
		val, err := v.expr.eval(vars)
		if err != nil {
			return nil, a.broken(err)
		}
		computed[v.name] = val
	}
	for _, g := range act.guards {
		ok, err := g.require.bool(vars)
		if err != nil {
			return nil, a.broken(err)
		}
		if ok {
			continue
		}
		msg, err := g.message.render(vars, false)
		if err != nil {
			return nil, a.broken(err)
		}
		hint, err := g.hint.render(vars, false)
		if err != nil {
			return nil, a.broken(err)
		}
		ae := &adapter.Error{Code: g.code, Outcome: adapter.Refused, Message: msg, Hint: hint, PolicyRefusal: g.policy}
		if g.field != "" {
			ae.Fields = map[string]string{g.field: msg}
		}
		return nil, ae
	}
	if act.dryRun != nil {
		path, body, err := a.renderRequest(act.dryRun, vars)
		if err != nil {
			return nil, err
		}
		answer, err := a.call(ctx, &exchange{method: act.dryRun.method, path: path, body: body, hasBody: act.dryRun.hasBody, gql: act.dryRun.gql, form: act.dryRun.form})
		if err != nil {
			return nil, err
		}
		vars["dry_run"] = answer
	}
	q, err := a.buildQuote(act, target, vars)
	if err != nil {
		return nil, a.broken(err)
	}
	if len(act.verify.beforeRefs) > 0 {
		// What verify.expect compares with, as read now: only the fields
		// it names.
		var ptrs []string
		for _, r := range act.verify.beforeRefs {
			ptrs = append(ptrs, pointer(r...))
		}
		q.Basis = project(o, ptrs)
	}
	return &plan{quote: q, vars: vars}, nil
}

func (a *Adapter) buildQuote(act *action, target adapter.Target, vars map[string]any) (adapter.Quote, error) {
	qt, err := act.quote.shown(vars)
	if err != nil {
		return adapter.Quote{}, err
	}
	q := adapter.Quote{Target: target, Lines: []adapter.QuoteLine{}, Consequences: []string{},
		Reversible: act.spec.Risk == adapter.Reversible && act.spec.Compensation != ""}
	// The texts as written are in the file's default locale, money(...)
	// in them too.
	texts := withLocale(vars, a.defaultLocale)
	render := func(t *template) string {
		if err != nil || t == nil {
			return ""
		}
		var s string
		s, err = t.render(texts, false)
		return s
	}
	q.Title, q.Currency, q.ConfirmLabel, q.DeclineLabel = render(qt.title), render(qt.currency), render(qt.confirm), render(qt.decline)
	for _, l := range qt.lines {
		q.Lines = append(q.Lines, adapter.QuoteLine{Label: render(l.label), From: render(l.from), To: render(l.to), Emphasis: l.emphasis, Sum: l.sum})
	}
	if ct := qt.customer; ct != nil {
		f, cerr := customerFacts(ct, vars, render)
		if cerr != nil {
			return q, cerr
		}
		q.Customer = f
	}
	for _, c := range qt.consequences {
		q.Consequences = append(q.Consequences, render(c))
	}
	for _, c := range qt.constraints {
		q.Constraints = append(q.Constraints, render(c))
	}
	if err != nil {
		return q, err
	}
	if qt.amount != nil {
		v, err := qt.amount.eval(vars)
		if err != nil {
			return q, err
		}
		n, ok := v.(int64)
		if !ok {
			return q, &exprError{e: qt.amount, err: fmt.Errorf("amount_cents gave %T, not a whole number", v)}
		}
		q.AmountCents = &n
	}
	if qt.now {
		now := a.now()
		q.EffectiveAt = &now
	}
	if len(a.locales) > 1 {
		// Only a quote with translations carries the done words: a
		// one-locale file's quote is written as it was, and its page
		// shows the spec's, the same words.
		if q.DoneWords = render(qt.done); err != nil {
			return q, err
		}
		q.Locale = a.defaultLocale
		q.Translations = map[string]adapter.QuoteWords{}
		for _, loc := range a.locales {
			if loc == a.defaultLocale {
				continue
			}
			w, err := quoteWords(qt, vars, loc)
			if err != nil {
				return q, err
			}
			q.Translations[loc] = w
		}
	}
	return q, nil
}

// customerFacts builds the quote's words for the customer.
func customerFacts(ct *customerTemplate, vars map[string]any, render func(*template) string) (*adapter.CustomerFacts, error) {
	f := &adapter.CustomerFacts{Title: render(ct.title), Reference: render(ct.reference), DateLabel: render(ct.dateLabel),
		MoneyArrives: render(ct.arrives)}
	if ct.date != nil {
		v, err := ct.date.eval(vars)
		if err != nil {
			return nil, err
		}
		s, _ := v.(string)
		d, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, &exprError{e: ct.date, err: fmt.Errorf("date gave %v, not an RFC 3339 time", v)}
		}
		d = d.UTC()
		f.Date = &d
	}
	if ct.items != nil {
		v, err := ct.items.eval(vars)
		if err != nil {
			return nil, err
		}
		list, ok := v.([]any)
		if !ok {
			return nil, &exprError{e: ct.items, err: fmt.Errorf("items gave %T, not a list", v)}
		}
		for _, it := range list {
			s, ok := it.(string)
			if !ok {
				return nil, &exprError{e: ct.items, err: fmt.Errorf("items holds %T, not a string", it)}
			}
			f.Items = append(f.Items, s)
		}
	}
	for _, w := range ct.why {
		f.Why = append(f.Why, render(w.text))
	}
	return f, nil
}

// shown is qt with only the lines and the customer's reasons whose when
// holds for vars. They are chosen once per call, so the quote as written
// and each of its translations (quoteWords) show the same ones, line for
// line, and no condition is evaluated once per language.
func (qt quoteTemplate) shown(vars map[string]any) (quoteTemplate, error) {
	var err error
	hidden := func(when *expr) bool {
		if when == nil || err != nil {
			return false
		}
		show, werr := when.bool(vars)
		err = werr
		return !show
	}
	out := qt
	out.lines = slices.DeleteFunc(slices.Clone(qt.lines), func(l lineTemplate) bool { return hidden(l.when) })
	if qt.customer != nil {
		ct := *qt.customer
		ct.why = slices.DeleteFunc(slices.Clone(ct.why), func(w whyTemplate) bool { return hidden(w.when) })
		out.customer = &ct
	}
	return out, err
}

// renderRequest renders a request's path and body.
func (a *Adapter) renderRequest(r *request, vars map[string]any) (string, any, error) {
	path, err := r.path.render(vars, true)
	if err != nil {
		return "", nil, a.broken(err)
	}
	body, err := renderBody(r.body, vars)
	if err != nil {
		return "", nil, a.broken(err)
	}
	return path, body, nil
}

func renderBody(v any, vars map[string]any) (any, error) {
	switch x := v.(type) {
	case *template:
		return x.value(vars)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			r, err := renderBody(val, vars)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			r, err := renderBody(val, vars)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

// writes is the described actions with the adapter kit around them.
func (a *Adapter) writes() adapter.Writes[*action] {
	return adapter.Writes[*action]{
		Planner: adapter.Planner{System: a.name, Ledger: a.ledger, Log: a.log},
		Defs:    a.actions,
		Spec:    func(act *action) adapter.ActionSpec { return act.spec },
		Plan: func(ctx context.Context, act *action, p adapter.Principal, vals map[string]any) (adapter.Plan, error) {
			pl, err := a.plan(ctx, p, act, vals)
			if err != nil {
				return adapter.Plan{}, err
			}
			return adapter.Plan{Quote: pl.quote, Send: func(ctx context.Context, key string) (adapter.Result, error) {
				return a.send(ctx, act, pl, key)
			}}, nil
		},
	}
}

// DryRun validates the action completely, reading the system but changing
// nothing, and returns the quote. Refusals are *adapter.Error with Outcome
// Refused.
func (a *Adapter) DryRun(ctx context.Context, p adapter.Principal, action string, args json.RawMessage) (adapter.Quote, error) {
	return a.writes().DryRun(ctx, p, action, args)
}

// Execute carries out a confirmed call once per idempotency key, like the
// shop adapter: a key seen before is answered from the ledger; otherwise
// the action is planned again from fresh reads (every guard applies), a
// target whose version differs from call.Quote's is refused with
// target_changed, the key is claimed, the request is sent carrying the key
// as the file's idempotency says (a header, a body field, or the file's own
// {key} in the request), and the outcome is recorded.
func (a *Adapter) Execute(ctx context.Context, p adapter.Principal, call adapter.Call) (adapter.Result, error) {
	return a.writes().Execute(ctx, p, call)
}

// send renders and sends the action's request and reads the result from
// the answer. An answer the file's result cannot be read from is Unknown:
// the system said yes to something.
func (a *Adapter) send(ctx context.Context, act *action, pl *plan, key string) (adapter.Result, error) {
	vars := pl.vars
	vars["key"] = key
	path, body, err := a.renderRequest(act.request, vars)
	if err != nil {
		return adapter.Result{}, err
	}
	if a.idemField != "" {
		body = withValue(body, a.idemField, key)
	}
	var headers map[string]string
	var refusal *errorRule
	if pre := act.pre; pre != nil {
		version, _ := lookupPointer(vars["target"], act.target.versionPtr)
		if pre.value != nil {
			if version, err = pre.value.value(vars); err != nil {
				return adapter.Result{}, a.broken(err)
			}
		}
		if pre.header != "" {
			headers = map[string]string{pre.header: text(version)}
		}
		if pre.bodyField != "" {
			body = withValue(body, pre.bodyField, version)
		}
		refusal = &pre.refusal
	}
	answer, err := a.call(ctx, &exchange{method: act.request.method, path: path, key: key, body: body, hasBody: act.request.hasBody,
		write: true, headers: headers, refusal: refusal, gql: act.request.gql, form: act.request.form})
	if err != nil {
		outcome := "unknown"
		if ae, ok := adapter.AsError(err); ok && ae.Outcome != adapter.Unknown {
			outcome = "refused"
		}
		return adapter.Result{Steps: []adapter.Step{{Name: act.spec.Name, Outcome: outcome}}}, err
	}
	vars["response"] = answer
	res := adapter.Result{Data: map[string]any{}}
	if res.Reference, err = act.reference.render(vars, false); err == nil && res.Reference == "" {
		err = fmt.Errorf("the reference is empty")
	}
	if err == nil && act.shortReference != nil {
		res.ShortReference, err = act.shortReference.render(vars, false)
	}
	for k, t := range act.data {
		if err != nil {
			break
		}
		res.Data[k], err = t.value(vars)
	}
	if err != nil {
		return adapter.Result{Steps: []adapter.Step{{Name: act.spec.Name, Outcome: "unknown", Detail: "the answer could not be read"}}},
			adapter.Unknowable(fmt.Errorf("httpadapter: %s answered %s but its answer does not give the result: %w", a.name, act.spec.Name, err))
	}
	// The recorded amount is optional: a 2xx answer without it still
	// landed, so it is logged and left out, not made unknown.
	if act.amount != nil {
		if err := recordedAmount(act, vars, &res); err != nil {
			res.AmountCents, res.Currency = nil, ""
			a.log.WarnContext(ctx, "httpadapter: the recorded amount of a landed write could not be read; it is left out",
				"system", a.name, "action", act.spec.Name, "err", err)
		}
	}
	res.Steps = []adapter.Step{{Name: act.spec.Name, Outcome: "applied", Detail: res.Reference}}
	return res, nil
}

// recordedAmount reads the amount the system recorded from its answer, as
// the action's result.amount_cents and result.currency say.
func recordedAmount(act *action, vars map[string]any, res *adapter.Result) error {
	v, err := act.amount.eval(vars)
	if err != nil {
		return err
	}
	if act.currency != nil {
		if res.Currency, err = act.currency.render(vars, false); err != nil {
			return err
		}
	}
	n, err := toCents(v, act.amountMajor, res.Currency)
	if err != nil {
		return &exprError{e: act.amount, err: err}
	}
	res.AmountCents = &n
	return nil
}
