package httpadapter

import (
	"context"
	"fmt"
)

// Get reads path (after the base URL) of the system with the file's
// credentials and decodes the JSON answer: the conformance suite counts a
// live system's effects this way, beside the adapter and not through its
// Lookup.
func (a *Adapter) Get(ctx context.Context, path string) (any, error) { return a.read(ctx, path) }

// EffectsPath renders the file's effects path for key, with the pointer to
// its list; ok is false when the file names no effects.
func (a *Adapter) EffectsPath(key string) (path, items string, ok bool, err error) {
	if a.effects == nil {
		return "", "", false, nil
	}
	path, err = a.effects.path.render(map[string]any{"key": key}, true)
	return path, a.effects.items, true, err
}

// Pointer reads the value at a JSON Pointer of a decoded answer.
func Pointer(v any, ptr string) (any, bool) { return lookupPointer(v, ptr) }

// EffectsByQuery says whether the file's effects are a GraphQL query
// (CountEffects counts them) rather than a path (EffectsPath).
func (a *Adapter) EffectsByQuery() bool { return a.effects != nil && a.effects.gql != nil }

// CountEffects counts the effects a graphql file's effects query lists
// under key, over every page its paging reaches; the conformance command
// counts a GraphQL system's effects this way, beside the adapter and not
// through its Lookup. It fails when the file's effects are no query.
func (a *Adapter) CountEffects(ctx context.Context, key string) (int, error) {
	if !a.EffectsByQuery() {
		return 0, fmt.Errorf("httpadapter: %s reads its effects by path, not by a GraphQL query", a.name)
	}
	items, _, _, err := a.graphqlList(ctx, a.effects.gql, map[string]any{"key": key}, a.effects.items, a.effects.paging, 0)
	return len(items), err
}
