package httpadapter

import (
	"context"
)

// graphqlList is readList for a GraphQL query: the items at the pointer
// items of each page's value, following the cursor (a connection's
// pageInfo { hasNextPage endCursor }) in the variable p.param, within the
// same bounds as a path's pages: p's cap, one deadline and byte budget for
// the whole list, a cursor seen before, or more than enough items (0: no
// limit). Without paging it is one request, with more read from has_more.
func (a *Adapter) graphqlList(ctx context.Context, op *graphqlOp, vars map[string]any, items string, p *paging,
	enough int) (out []any, more, listed bool, err error) {
	if p == nil {
		answer, _, err := a.graphqlRead(ctx, op, vars, "")
		if err != nil {
			return nil, false, false, err
		}
		v, _ := lookupPointer(answer, items)
		l, ok := v.([]any)
		return l, hasMore(answer), ok, nil
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	listed = true
	seen := map[string]bool{}
	spent := 0
	cursor := ""
	for page := 1; ; page++ {
		answer, size, err := a.graphqlRead(ctx, op, vars, cursor)
		if err != nil {
			return nil, false, false, err
		}
		spent += size
		v, _ := lookupPointer(answer, items)
		l, ok := v.([]any)
		listed = listed && ok
		out = append(out, l...)
		if p.hasMore != "" {
			if v, _ := lookupPointer(answer, p.hasMore); v != true {
				return out, false, listed, nil
			}
		}
		next := ""
		if p.next != "" {
			v, _ := lookupPointer(answer, p.next)
			next = text(v)
		}
		if next == "" {
			// has_more alone is not followed, only marked.
			return out, p.hasMore != "" && p.next == "", listed, nil
		}
		if page >= p.maxPages || (enough > 0 && len(out) > enough) {
			return out, true, listed, nil
		}
		if seen[next] || spent >= listBytes {
			a.log.WarnContext(ctx, "httpadapter: a GraphQL list's paging stopped", "system", a.name, "operation", op.name,
				"repeated", seen[next], "bytes", spent)
			return out, true, listed, nil
		}
		seen[next] = true
		cursor = next
	}
}
