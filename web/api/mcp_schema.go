package api

import (
	"strings"
	"sync"
)

// Every MCP tool declares an outputSchema: its structuredContent is one of
// the API's bodies, described by the same schemas as the OpenAPI document
// (with their $refs written out), or, on a tool error (isError), the API's
// error body. Clients that check structuredContent against the schema
// (the TypeScript SDK does, errors included) accept both.

// mcpOutputSchema is the output schema of a tool whose result is the API's
// schema name (ReadResult, Invocation or Task). The servers built for each
// call share them and only read them.
func mcpOutputSchema(name string) map[string]any { return mcpOutputSchemas()[name] }

var mcpOutputSchemas = sync.OnceValue(func() map[string]map[string]any {
	schemas := apiSchemas()
	out := map[string]map[string]any{}
	for _, name := range []string{"ReadResult", "Invocation", "Task"} {
		out[name] = map[string]any{"type": "object", "anyOf": []any{
			inlineRefs(schemas[name], schemas),
			withDesc(inlineRefs(schemas["Error"], schemas).(map[string]any), "a tool error (isError): the API's error body"),
		}}
	}
	return out
})

// inlineRefs is v with each {"$ref": "#/components/schemas/X"} replaced by
// X, so that a tool's schema stands alone.
func inlineRefs(v any, schemas map[string]any) any {
	switch v := v.(type) {
	case map[string]any:
		if r, ok := v["$ref"].(string); ok {
			if name, ok := strings.CutPrefix(r, "#/components/schemas/"); ok {
				return inlineRefs(schemas[name], schemas)
			}
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = inlineRefs(e, schemas)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = inlineRefs(e, schemas)
		}
		return out
	default:
		return v
	}
}
