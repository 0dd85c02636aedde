package httpadapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The part of an OpenAPI 3.0/3.1 document that a draft reads. parseOpenAPI
// inlines every local $ref first, so these types never hold one; a schema
// reached through #/components/schemas/X keeps X as RefName.

type oaDoc struct {
	OpenAPI string `json:"openapi"`
	Info    struct {
		Title string `json:"title"`
	} `json:"info"`
	Servers []struct {
		URL       string `json:"url"`
		Variables map[string]struct {
			Default string `json:"default"`
		} `json:"variables"`
	} `json:"servers"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Security   []map[string][]string                 `json:"security"`
	Components struct {
		SecuritySchemes map[string]oaSecurity `json:"securitySchemes"`
	} `json:"components"`
}

type oaSecurity struct {
	Type   string `json:"type"`
	Scheme string `json:"scheme"`
	In     string `json:"in"`
	Name   string `json:"name"`
	Flows  struct {
		ClientCredentials *struct {
			TokenURL string            `json:"tokenUrl"`
			Scopes   map[string]string `json:"scopes"`
		} `json:"clientCredentials"`
	} `json:"flows"`
}

type oaSchema struct {
	RefName     string               `json:"x-draft-ref"`
	Type        any                  `json:"type"` // a string, or in 3.1 a list ("string", "null")
	Properties  map[string]*oaSchema `json:"properties"`
	Items       *oaSchema            `json:"items"`
	AllOf       []*oaSchema          `json:"allOf"`
	Required    []string             `json:"required"`
	Enum        []any                `json:"enum"`
	Default     any                  `json:"default"`
	Description string               `json:"description"`
	Format      string               `json:"format"`
	MaxLength   *int                 `json:"maxLength"`
	Minimum     *float64             `json:"minimum"`
	Maximum     *float64             `json:"maximum"`
	ReadOnly    bool                 `json:"readOnly"`
	WriteOnly   bool                 `json:"writeOnly"`
}

type oaParam struct {
	Name        string    `json:"name"`
	In          string    `json:"in"`
	Description string    `json:"description"`
	Required    bool      `json:"required"`
	Schema      *oaSchema `json:"schema"`
}

type oaContent map[string]oaMedia

// oaMedia is one content type of a body: its schema and, for a form, how
// each property is encoded.
type oaMedia struct {
	Schema   *oaSchema             `json:"schema"`
	Encoding map[string]oaEncoding `json:"encoding"`
}

// oaEncoding is how a form field is written: style "form" (exploded by
// default: tag=a&tag=b), "deepObject" (metadata[reason]=x),
// "spaceDelimited" or "pipeDelimited".
type oaEncoding struct {
	Style   string `json:"style"`
	Explode *bool  `json:"explode"`
}

type oaOperation struct {
	OperationID string    `json:"operationId"`
	Summary     string    `json:"summary"`
	Description string    `json:"description"`
	Parameters  []oaParam `json:"parameters"`
	RequestBody *struct {
		Content oaContent `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Content oaContent `json:"content"`
	} `json:"responses"`

	// Filled in by operations: where the operation is.
	method, path string
}

// operations lists every GET, POST, PUT, PATCH and DELETE of the document,
// in path order, with the path item's parameters added to each.
func (d *oaDoc) operations() ([]*oaOperation, error) {
	var out []*oaOperation
	for _, p := range slices.Sorted(maps.Keys(d.Paths)) {
		item := d.Paths[p]
		var shared []oaParam
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				return nil, fmt.Errorf("paths %s: parameters: %w", p, err)
			}
		}
		for _, m := range []string{"get", "post", "put", "patch", "delete"} {
			raw, ok := item[m]
			if !ok {
				continue
			}
			op := &oaOperation{method: strings.ToUpper(m), path: p}
			if err := json.Unmarshal(raw, op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", op.method, p, err)
			}
			for _, sp := range shared {
				if !slices.ContainsFunc(op.Parameters, func(x oaParam) bool { return x.Name == sp.Name && x.In == sp.In }) {
					op.Parameters = append(op.Parameters, sp)
				}
			}
			out = append(out, op)
		}
	}
	return out, nil
}

// name is how the operation is called in messages: its operationId, or
// its method and path.
func (op *oaOperation) name() string {
	if op.OperationID != "" {
		return op.OperationID
	}
	return op.method + " " + op.path
}

func (op *oaOperation) pathParams() []oaParam {
	var out []oaParam
	for _, p := range op.Parameters {
		if p.In == "path" {
			out = append(out, p)
		}
	}
	return out
}

// success is the JSON schema of the operation's first 2xx answer.
func (op *oaOperation) success() *oaSchema {
	for _, code := range slices.Sorted(maps.Keys(op.Responses)) {
		if strings.HasPrefix(code, "2") {
			return jsonSchema(op.Responses[code].Content)
		}
	}
	return nil
}

// formMedia is the application/x-www-form-urlencoded content of a body
// that offers no JSON, nil otherwise: JSON is drafted when both are.
func formMedia(c oaContent) *oaMedia {
	if jsonSchema(c) != nil {
		return nil
	}
	for _, ct := range slices.Sorted(maps.Keys(c)) {
		if media, _, _ := strings.Cut(ct, ";"); strings.EqualFold(strings.TrimSpace(media), contentTypeForm) && c[ct].Schema != nil {
			m := c[ct]
			return &m
		}
	}
	return nil
}

func jsonSchema(c oaContent) *oaSchema {
	for _, ct := range slices.Sorted(maps.Keys(c)) {
		if strings.Contains(ct, "json") || ct == "*/*" {
			return c[ct].Schema
		}
	}
	return nil
}

// typeName is the schema's type, the first that is not "null" in 3.1.
func (s *oaSchema) typeName() string {
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if n, _ := x.(string); n != "null" {
				return n
			}
		}
	}
	if len(s.Properties) > 0 || len(s.AllOf) > 0 {
		return "object"
	}
	return ""
}

// fields is the schema's properties with those of allOf merged in.
func (s *oaSchema) fields() (props map[string]*oaSchema, required []string) {
	props = map[string]*oaSchema{}
	for _, part := range s.AllOf {
		p, r := part.fields()
		maps.Copy(props, p)
		required = append(required, r...)
	}
	maps.Copy(props, s.Properties)
	return props, append(required, s.Required...)
}

// parseOpenAPI reads an OpenAPI document, JSON or YAML, and inlines its
// local references.
func parseOpenAPI(raw []byte) (*oaDoc, error) {
	var tree any
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' {
		if err := json.Unmarshal(raw, &tree); err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
	} else if err := yaml.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("neither JSON nor valid YAML: %w", err)
	}
	root, ok := stringKeys(tree).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not an OpenAPI document: the top level is not an object")
	}
	if v, _ := root["openapi"].(string); !strings.HasPrefix(v, "3.") {
		return nil, fmt.Errorf("not an OpenAPI 3.0 or 3.1 document (openapi: %q); convert a Swagger 2.0 document first", v)
	}
	inlined, err := json.Marshal(inline(root, root, 0))
	if err != nil {
		return nil, err
	}
	var d oaDoc
	if err := json.Unmarshal(inlined, &d); err != nil {
		return nil, fmt.Errorf("not an OpenAPI document: %w", err)
	}
	return &d, nil
}

// maxInlined caps how many references one document expands: a document
// whose schemas refer to each other widely would otherwise grow
// exponentially, cycle or not.
const maxInlined = 2000

// inline replaces every {"$ref": "#/..."} by what it points to. A
// reference already being expanded on the current path (a cycle: a
// schema that contains itself), one past depth 8, and any once
// maxInlined references were expanded, end in an empty schema.
func inline(v any, root map[string]any, depth int) any {
	in := &inliner{root: root, onPath: map[string]bool{}}
	return in.inline(v, depth)
}

type inliner struct {
	root   map[string]any
	onPath map[string]bool
	done   int
}

func (in *inliner) inline(v any, depth int) any {
	switch n := v.(type) {
	case map[string]any:
		if ref, ok := n["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
			if depth > 8 || in.onPath[ref] || in.done >= maxInlined {
				return map[string]any{}
			}
			target, ok := lookupPointer(in.root, ref[1:])
			if !ok {
				return map[string]any{}
			}
			in.done++
			in.onPath[ref] = true
			out := in.inline(target, depth+1)
			delete(in.onPath, ref)
			if m, ok := out.(map[string]any); ok && strings.HasPrefix(ref, "#/components/schemas/") {
				m = maps.Clone(m)
				m["x-draft-ref"] = strings.TrimPrefix(ref, "#/components/schemas/")
				return m
			}
			return out
		}
		out := make(map[string]any, len(n))
		for k, x := range n {
			out[k] = in.inline(x, depth)
		}
		return out
	case []any:
		out := make([]any, len(n))
		for i, x := range n {
			out[i] = in.inline(x, depth)
		}
		return out
	}
	return v
}

// stringKeys turns YAML's maps with other keys (a response code 200 is a
// number) into maps with string keys, as JSON has.
func stringKeys(v any) any {
	switch n := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(n))
		for k, x := range n {
			m[fmt.Sprint(k)] = stringKeys(x)
		}
		return m
	case map[string]any:
		for k, x := range n {
			n[k] = stringKeys(x)
		}
		return n
	case []any:
		for i, x := range n {
			n[i] = stringKeys(x)
		}
		return n
	}
	return v
}
