package httpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"countersign/internal/adapter"
)

// Read runs a read tool: one of the principal's objects, a capped list of
// them, or a plain request, each answer built by copying only the file's
// allowlisted fields. A list longer than max_items (or one the system says
// has more) is cut and marked truncated.
func (a *Adapter) Read(ctx context.Context, p adapter.Principal, tool string, raw json.RawMessage) (adapter.ReadResult, error) {
	i := slices.IndexFunc(a.reads, func(r *readTool) bool { return r.spec.Name == tool })
	if i < 0 {
		return adapter.ReadResult{}, &adapter.Error{Code: "unknown_tool", Outcome: adapter.Refused,
			Message: fmt.Sprintf("System %q has no read tool %q.", a.name, tool), Hint: "List the tools to see the read tools."}
	}
	rt := a.reads[i]
	args, err := rt.spec.Validate(raw)
	if err != nil {
		return adapter.ReadResult{}, err
	}
	switch {
	case rt.object != nil:
		ref, _ := args[rt.param].(string)
		o, _, _, err := a.resolve(ctx, p, rt.object, ref)
		if err != nil {
			return adapter.ReadResult{}, err
		}
		return adapter.ReadResult{Data: project(o, rt.fields), Count: 1}, nil
	case rt.list != nil:
		account, err := a.account(ctx, p)
		if err != nil {
			return adapter.ReadResult{}, err
		}
		vars := map[string]any{"account": account, "args": args, "principal": adapter.NormaliseCustomerRef(p.CustomerRef)}
		items, more, _, err := a.fetchList(ctx, rt.list.list, rt.list.listGQL, vars, rt.list.items, rt.list.paging, 0)
		if err != nil {
			return adapter.ReadResult{}, err
		}
		var owned []any
		for _, it := range items {
			if ok, err := a.owns(rt.list, it, account); err != nil {
				return adapter.ReadResult{}, err
			} else if ok {
				owned = append(owned, it)
			}
		}
		return capped(owned, more, rt), nil
	case rt.account:
		account, err := a.account(ctx, p)
		if err != nil {
			return adapter.ReadResult{}, err
		}
		if rt.path == nil {
			return adapter.ReadResult{Data: project(account, rt.fields), Count: 1}, nil
		}
		// The path is rendered from the account alone: args are not bound,
		// so nothing the model sends reaches it.
		return a.readPath(ctx, rt, map[string]any{"account": account, "principal": adapter.NormaliseCustomerRef(p.CustomerRef)})
	default:
		vars := map[string]any{"args": args, "principal": adapter.NormaliseCustomerRef(p.CustomerRef)}
		if templateUses(rt.path, "account") || graphqlUses(rt.gql, "account") {
			account, err := a.account(ctx, p)
			if err != nil {
				return adapter.ReadResult{}, err
			}
			vars["account"] = account
		}
		return a.readPath(ctx, rt, vars)
	}
}

// readPath reads a read tool's path: one object, or a capped list (at
// items, or the answer itself), over the pages its paging names.
func (a *Adapter) readPath(ctx context.Context, rt *readTool, vars map[string]any) (adapter.ReadResult, error) {
	if rt.items == "" {
		answer, _, err := a.fetch(ctx, rt.path, rt.gql, vars)
		if err != nil {
			return adapter.ReadResult{}, err
		}
		if l, ok := answer.([]any); ok {
			return capped(l, false, rt), nil
		}
		return adapter.ReadResult{Data: project(answer, rt.fields), Count: 1}, nil
	}
	items, more, _, err := a.fetchList(ctx, rt.path, rt.gql, vars, rt.items, rt.paging, rt.max)
	if err != nil {
		return adapter.ReadResult{}, err
	}
	return capped(items, more, rt), nil
}

// hasMore reads a list answer's has_more flag, a common shape.
func hasMore(answer any) bool {
	m, _ := answer.(map[string]any)
	b, _ := m["has_more"].(bool)
	return b
}

func capped(items []any, more bool, rt *readTool) adapter.ReadResult {
	truncated := more || len(items) > rt.max
	if len(items) > rt.max {
		items = items[:rt.max]
	}
	out := make([]any, 0, len(items))
	for _, it := range items {
		out = append(out, project(it, rt.fields))
	}
	return adapter.ReadResult{Data: out, Count: len(out), Truncated: truncated}
}

// project copies only the allowlisted JSON Pointers of v into a new value;
// a "*" token stands for every element of an array.
func project(v any, fields []string) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		toks := []string{}
		if f != "" {
			toks = strings.Split(f[1:], "/")
		}
		if picked, ok := pick(v, toks); ok {
			merged, _ := merge(out, picked).(map[string]any)
			if merged != nil {
				out = merged
			}
		}
	}
	return out
}

func pick(v any, toks []string) (any, bool) {
	if len(toks) == 0 {
		return v, true
	}
	tok := strings.ReplaceAll(strings.ReplaceAll(toks[0], "~1", "/"), "~0", "~")
	switch x := v.(type) {
	case map[string]any:
		val, ok := x[tok]
		if !ok {
			return nil, false
		}
		p, ok := pick(val, toks[1:])
		if !ok {
			return nil, false
		}
		return map[string]any{tok: p}, true
	case []any:
		if tok != "*" {
			return nil, false
		}
		out := make([]any, len(x))
		for i, el := range x {
			out[i], _ = pick(el, toks[1:])
		}
		return out, true
	}
	return nil, false
}

func merge(a, b any) any {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return b
		}
		for k, v := range y {
			if old, ok := x[k]; ok {
				x[k] = merge(old, v)
			} else {
				x[k] = v
			}
		}
		return x
	case []any:
		y, ok := b.([]any)
		if !ok || len(y) != len(x) {
			return b
		}
		for i := range x {
			if x[i] == nil {
				x[i] = y[i]
			} else if y[i] != nil {
				x[i] = merge(x[i], y[i])
			}
		}
		return x
	}
	return b
}

// accountTool compiles a read tool of the principal's own account: the
// account the principal lookup finds, or a path read over it. Nothing the
// model sends can name another account, so the path may not use args.
func (c *compiler) accountTool(ptr string, r ReadToolDesc, rt *readTool, hasPrincipal bool) {
	if !hasPrincipal {
		c.fail(ptr+"/account", "the tool reads the principal's account, but the file has no principal lookup",
			`add "principal" saying how a customer's e-mail maps to their account`)
	}
	if r.Object != "" || r.List != "" {
		c.fail(ptr+"/account", "a tool of the principal's account reads no object or list", `remove "object" and "list", or "account"`)
	}
	if r.Path == "" {
		return
	}
	rt.path = c.path(ptr+"/path", r.Path)
	if templateUses(rt.path, "args") {
		c.fail(ptr+"/path", fmt.Sprintf("read tool %s reads the principal's own account, but its path uses args, so the model could name another account", r.Name),
			"build the path from account and principal only, e.g. \"/accounts/{account.id}\"")
	}
}
