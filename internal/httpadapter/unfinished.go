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

// Exposed lists what in a description file would open a system wider
// than its customers' own data, each as a *FileError: an object kind
// without an owner (every customer could read and change every object of
// it), and a read tool's field whose pointer holds one of forbidden (the
// names of internal data, such as the conformance suite's
// DefaultForbidden). It fails only when raw is not JSON.
func Exposed(file string, raw []byte, forbidden []string) ([]*FileError, error) {
	var d struct {
		Objects   map[string]map[string]any `json:"objects"`
		ReadTools []struct {
			Name   string   `json:"name"`
			Fields []string `json:"fields"`
		} `json:"read_tools"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, &FileError{File: file, Line: syntaxLine(raw, err), Problem: "not valid JSON: " + err.Error()}
	}
	pos := locate(raw)
	var out []*FileError
	for _, kind := range slices.Sorted(maps.Keys(d.Objects)) {
		if owner, _ := d.Objects[kind]["owner"].(string); owner == "" {
			ptr := "/objects/" + escapePointer(kind)
			out = append(out, &FileError{File: file, Line: pos.line(ptr), Pointer: ptr,
				Problem: fmt.Sprintf("objects.%s has no owner, so every customer could read and change every %s", kind, kind),
				Fix:     `add "owner": a CEL condition over object and account that holds of the customer's own, e.g. object.customer_id == account.id`})
		}
	}
	for i, rt := range d.ReadTools {
		for j, f := range rt.Fields {
			for _, bad := range forbidden {
				if strings.Contains(strings.ToLower(f), bad) {
					ptr := fmt.Sprintf("/read_tools/%d/fields/%d", i, j)
					out = append(out, &FileError{File: file, Line: pos.line(ptr), Pointer: ptr,
						Problem: fmt.Sprintf("read tool %s shows %s, internal data the assistant must not see", rt.Name, f),
						Fix:     "remove it from fields"})
					break
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *FileError) int { return a.Line - b.Line })
	return out, nil
}
