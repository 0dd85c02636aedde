package api

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/assistants"
	"countersign/web/kit"
)

// TestResponseSchemasListWhatTheHandlersSend compares each answer's schema
// with the Go type the handler encodes, member by member and all the way
// down: every member the type can send is a property; a member sent every
// time (no omitempty) is required, so a typed client need not test for
// it; a member that may be left out (omitempty) is not, so a client does
// not count on it; and the schema lists no member the type never sends.
func TestResponseSchemasListWhatTheHandlersSend(t *testing.T) {
	t.Parallel()
	schemas := apiSchemas()
	for name, v := range map[string]any{
		"Invocation": invocationJSON{}, "Task": taskJSON{}, "ToolList": toolsAnswer{}, "ReadResult": adapter.ReadResult{},
		"Receipt": receiptJSON{}, "RecordedConversationEvent": assistants.Event{}, "Conversation": assistants.Conversation{},
		"Error": kit.APIError{},
	} {
		for _, m := range compareFields(schemas, name, reflect.TypeOf(v), schemas[name].(map[string]any)) {
			t.Error(m)
		}
	}
}

// compareFields lists how struct type typ and object schema s disagree,
// at path.
func compareFields(schemas map[string]any, path string, typ reflect.Type, s map[string]any) []string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	s = objectBranch(schemas, s)
	var out []string
	switch {
	case typ.Kind() == reflect.Slice && typ.Elem().Kind() != reflect.Uint8:
		if items, ok := s["items"].(map[string]any); ok {
			out = append(out, compareFields(schemas, path+"[]", typ.Elem(), items)...)
		}
		return out
	case typ.Kind() != reflect.Struct || typ == reflect.TypeFor[time.Time]() || s == nil || s["properties"] == nil:
		return nil
	}
	props, _ := s["properties"].(map[string]any)
	var required []string
	switch r := s["required"].(type) {
	case []string:
		required = r
	case []any:
		for _, x := range r {
			required = append(required, x.(string))
		}
	}
	sent := map[string]bool{}
	for _, f := range jsonMembers(typ) {
		tag, ok := f.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" || !ok {
			name = f.Name
		}
		sent[name] = true
		at := path + "." + name
		ps, listed := props[name].(map[string]any)
		if !listed {
			out = append(out, at+": sent, not in the schema")
			continue
		}
		omitted := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		switch isRequired := slices.Contains(required, name); {
		case omitted && isRequired:
			out = append(out, at+": left out when empty (omitempty), yet required")
		case !omitted && !isRequired:
			out = append(out, at+": sent every time, yet not required")
		}
		if f.Type != reflect.TypeFor[json.RawMessage]() {
			out = append(out, compareFields(schemas, at, f.Type, ps)...)
		}
	}
	for name := range props {
		if !sent[name] {
			out = append(out, path+"."+name+": in the schema, never sent")
		}
	}
	slices.Sort(out)
	return out
}

// jsonMembers are the fields encoding/json writes of struct type typ: its
// exported fields not tagged "-", with an untagged embedded struct's
// fields in its place.
func jsonMembers(typ reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for f := range typ.Fields() {
		tag, tagged := f.Tag.Lookup("json")
		switch {
		case tag == "-":
		case f.Anonymous && !tagged && f.Type.Kind() == reflect.Struct:
			out = append(out, jsonMembers(f.Type)...)
		case f.IsExported():
			out = append(out, f)
		}
	}
	return out
}

// objectBranch is s with a $ref followed and a nullable anyOf's object
// branch taken.
func objectBranch(schemas map[string]any, s map[string]any) map[string]any {
	for s != nil {
		if r, ok := s["$ref"].(string); ok {
			s, _ = schemas[strings.TrimPrefix(r, "#/components/schemas/")].(map[string]any)
			continue
		}
		if branches, ok := s["anyOf"].([]any); ok {
			var next map[string]any
			for _, b := range branches {
				if m := b.(map[string]any); m["type"] != "null" {
					next = m
				}
			}
			s = next
			continue
		}
		return s
	}
	return nil
}
