package httpadapter

import "context"

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
