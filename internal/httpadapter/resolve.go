package httpadapter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"countersign/internal/adapter"
)

// account maps the principal to exactly one account of the system, or
// fails with unknown_customer; it never guesses.
func (a *Adapter) account(ctx context.Context, p adapter.Principal) (any, error) {
	email, err := adapter.PrincipalEmail(p)
	if err != nil {
		return nil, err
	}
	vars := map[string]any{"principal": email}
	answer, _, err := a.fetch(ctx, a.principal.path, a.principal.gql, vars)
	if err != nil {
		return nil, err
	}
	list, _ := lookupPointer(answer, a.principal.items)
	items, _ := list.([]any)
	var found []any
	for _, it := range items {
		ok, err := a.principal.match.bool(map[string]any{"account": it, "principal": email})
		if err != nil {
			return nil, a.broken(err)
		}
		if ok {
			found = append(found, it)
		}
	}
	return adapter.OneAccount(a.name, email, found)
}

// broken reports an expression of the file that failed at run time: the
// description is at fault, nothing was sent. The answer names the action
// (or read tool) and the expression, by its place in the file, as the
// field; the evaluation's own error, which may quote the system's data,
// stays in Err for the log.
func (a *Adapter) broken(err error) error {
	if ae, ok := adapter.AsError(err); ok {
		return ae // a refusal of a value (adapter.PathSegment), not of the file
	}
	var xe *exprError
	if errors.Is(err, errBackslash) && errors.As(err, &xe) {
		return a.unquotable(xe)
	}
	ae := &adapter.Error{Code: "description_error", Outcome: adapter.NotSent,
		Message: fmt.Sprintf("The description of %s could not be applied to this case.", a.name),
		Hint:    "Hand this call to a person; the system's description file needs fixing.", Err: err}
	if errors.As(err, &xe) {
		where := xe.e.owner
		if where == "" {
			where = "the file"
		}
		ae.Message = fmt.Sprintf("The description of %s could not be applied to this case: in %s, the expression %s at %s (%s) failed.",
			a.name, where, xe.e.src, xe.e.ptr, xe.e.at)
		ae.Fields = map[string]string{xe.e.ptr: fmt.Sprintf("%s: %s failed here", where, xe.e.src)}
	}
	return ae
}

// unquotable refuses a call whose argument filter_quote cannot make one
// literal (it holds a backslash), like a guard: nothing was sent.
func (a *Adapter) unquotable(xe *exprError) error {
	names := quotedArgs(xe.e.tree)
	what := "a value"
	if len(names) > 0 {
		what = strings.Join(names, ", ")
	}
	ae := &adapter.Error{Code: adapter.CodeInvalidArguments, Outcome: adapter.Refused,
		Message: fmt.Sprintf("%s may not contain a backslash (\\): %s cannot search for it; nothing was sent.", what, a.name),
		Hint:    "Ask for the value again without a backslash.", Err: xe, Fields: map[string]string{}}
	for _, n := range names {
		ae.Fields[n] = "may not contain a backslash"
	}
	return ae
}

// Resolve turns ref into exactly one object of kind of the principal's:
// an id (matching the kind's id_pattern) is read directly; words are
// matched against the terms of the principal's objects. None is
// not_found, several are ambiguous_reference with the candidates.
func (a *Adapter) Resolve(ctx context.Context, p adapter.Principal, kind, ref string) (adapter.Target, error) {
	obj, ok := a.objects[kind]
	if !ok {
		return adapter.Target{}, adapter.Invalid(map[string]string{"kind": "not an object kind of " + a.name})
	}
	_, t, _, err := a.resolve(ctx, p, obj, ref)
	return t, err
}

// resolve returns the object, its target and the principal's account (nil
// for objects without an owner).
func (a *Adapter) resolve(ctx context.Context, p adapter.Principal, obj *object, ref string) (any, adapter.Target, any, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, adapter.Target{}, nil, adapter.Invalid(map[string]string{obj.kind + "_id": "required: an id or the customer's words for the " + obj.kind})
	}
	var account any
	if obj.owner != nil {
		var err error
		if account, err = a.account(ctx, p); err != nil {
			return nil, adapter.Target{}, nil, err
		}
	}
	if obj.idPattern == nil || obj.idPattern.MatchString(ref) || !obj.listed() {
		o, err := a.getObject(ctx, obj, ref, account)
		if err != nil {
			return nil, adapter.Target{}, nil, err
		}
		t, err := a.target(obj, o, account)
		return o, t, account, err
	}
	vars := map[string]any{"account": account, "principal": adapter.NormaliseCustomerRef(p.CustomerRef)}
	items, more, _, err := a.fetchList(ctx, obj.list, obj.listGQL, vars, obj.items, obj.paging, 0)
	if err != nil {
		return nil, adapter.Target{}, nil, err
	}
	if more && obj.paging != nil {
		return nil, adapter.Target{}, nil, pagedOut(obj.kind, obj.paging.maxPages)
	}
	var matched []any
	for _, it := range items {
		ovars := map[string]any{"object": it, "account": account, "ref": ref}
		if owned, err := a.owns(obj, it, account); err != nil {
			return nil, adapter.Target{}, nil, err
		} else if !owned {
			continue
		}
		if obj.exact != nil {
			if ok, err := obj.exact.bool(ovars); err == nil && ok {
				matched = []any{it}
				break
			}
		}
		tv, err := obj.terms.eval(ovars)
		if err != nil {
			return nil, adapter.Target{}, nil, a.broken(err)
		}
		var terms []string
		if l, ok := tv.([]any); ok {
			for _, x := range l {
				terms = append(terms, text(x))
			}
		}
		if adapter.Describes(ref, terms, nil) {
			matched = append(matched, it)
		}
	}
	switch len(matched) {
	case 0:
		return nil, adapter.Target{}, nil, adapter.NotFound(obj.kind, ref)
	case 1:
		t, err := a.target(obj, matched[0], account)
		return matched[0], t, account, err
	}
	var candidates []adapter.Candidate
	for _, m := range matched {
		t, err := a.target(obj, m, account)
		if err != nil {
			return nil, adapter.Target{}, nil, err
		}
		candidates = append(candidates, adapter.Candidate{ID: t.ID, Display: t.Display})
	}
	slices.SortStableFunc(candidates, func(x, y adapter.Candidate) int { return strings.Compare(x.Display, y.Display) })
	return nil, adapter.Target{}, nil, adapter.Ambiguous(obj.kind, ref, candidates)
}

// getObject reads one object by id; another principal's object is
// answered exactly like a missing one.
func (a *Adapter) getObject(ctx context.Context, obj *object, id string, account any) (any, error) {
	o, _, err := a.fetch(ctx, obj.get, obj.getGQL, map[string]any{"id": id, "account": account})
	if ae, ok := adapter.AsError(err); ok && ae.Code == adapter.CodeNotFound {
		return nil, adapter.NotFound(obj.kind, id)
	}
	if err != nil {
		return nil, err
	}
	if owned, err := a.owns(obj, o, account); err != nil {
		return nil, err
	} else if !owned {
		return nil, adapter.NotFound(obj.kind, id)
	}
	return o, nil
}

func (a *Adapter) owns(obj *object, o, account any) (bool, error) {
	if obj.owner == nil {
		return true, nil
	}
	ok, err := obj.owner.bool(map[string]any{"object": o, "account": account})
	if err != nil {
		return false, a.broken(err)
	}
	return ok, nil
}

func (a *Adapter) target(obj *object, o, account any) (adapter.Target, error) {
	id, _ := lookupPointer(o, obj.idPtr)
	display, err := obj.display.render(map[string]any{"object": o, "account": account}, false)
	if err != nil {
		return adapter.Target{}, a.broken(err)
	}
	t := adapter.Target{System: a.name, Kind: obj.kind, ID: text(id), Display: display}
	if obj.versionPtr != "" {
		v, _ := lookupPointer(o, obj.versionPtr)
		t.Version = text(v)
	}
	if obj.identity != nil {
		v, err := obj.identity.eval(map[string]any{"object": o})
		if err != nil {
			return adapter.Target{}, a.broken(err)
		}
		switch v.(type) {
		case map[string]any, []any:
			return adapter.Target{}, a.broken(&exprError{e: obj.identity, err: fmt.Errorf("gave %T, not a string or a number", v)})
		}
		if key := text(v); key != "" {
			t.BusinessKey = &adapter.BusinessKey{Name: obj.identityName, Value: key}
		}
	}
	return t, nil
}
