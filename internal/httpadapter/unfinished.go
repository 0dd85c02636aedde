package httpadapter

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Unfinished lists every string of a description file that still holds
// "TODO" (what a draft from an OpenAPI document leaves for a person), in
// file order, each as a *FileError naming the line, the pointer and the
// text. It fails only when raw is not JSON; Load says whether it loads.
func Unfinished(file string, raw []byte) ([]*FileError, error) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, &FileError{File: file, Line: syntaxLine(raw, err), Problem: "not valid JSON: " + err.Error()}
	}
	pos := locate(raw)
	var out []*FileError
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch n := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(n)) {
				walk(ptr+"/"+escapePointer(k), n[k])
			}
		case []any:
			for i, x := range n {
				walk(ptr+"/"+strconv.Itoa(i), x)
			}
		case string:
			if strings.Contains(n, "TODO") {
				out = append(out, &FileError{File: file, Line: pos.line(ptr), Pointer: ptr,
					Problem: fmt.Sprintf("left to write: %q", n), Fix: "write what the system really does here, or remove it"})
			}
		}
	}
	walk("", doc)
	slices.SortStableFunc(out, func(a, b *FileError) int { return a.Line - b.Line })
	return out, nil
}
