package httpadapter

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// introspectionSDL turns the JSON answer of an introspection query
// ({"data": {"__schema": …}} or {"__schema": …}) into SDL.
func introspectionSDL(raw []byte) (string, error) {
	var doc struct {
		Data *struct {
			Schema *introSchema `json:"__schema"`
		} `json:"data"`
		Schema *introSchema `json:"__schema"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return "", fmt.Errorf("not an introspection answer: %w (fix: give the SDL, or the JSON answer of an introspection query)", err)
	}
	s := doc.Schema
	if doc.Data != nil && doc.Data.Schema != nil {
		s = doc.Data.Schema
	}
	if s == nil || s.QueryType == nil {
		return "", fmt.Errorf("the JSON holds no __schema with a queryType (fix: give the answer of the standard introspection query)")
	}
	var b strings.Builder
	b.WriteString("schema { query: " + s.QueryType.Name)
	if s.MutationType != nil {
		b.WriteString(" mutation: " + s.MutationType.Name)
	}
	b.WriteString(" }\n")
	for _, t := range s.Types {
		if strings.HasPrefix(t.Name, "__") || slices.Contains([]string{"String", "Int", "Float", "Boolean", "ID"}, t.Name) {
			continue
		}
		switch t.Kind {
		case "SCALAR":
			fmt.Fprintf(&b, "scalar %s\n", t.Name)
		case "ENUM":
			var vs []string
			for _, v := range t.EnumValues {
				vs = append(vs, v.Name)
			}
			fmt.Fprintf(&b, "enum %s { %s }\n", t.Name, strings.Join(vs, " "))
		case "UNION":
			var ps []string
			for _, p := range t.PossibleTypes {
				ps = append(ps, p.Name)
			}
			fmt.Fprintf(&b, "union %s = %s\n", t.Name, strings.Join(ps, " | "))
		case "INPUT_OBJECT":
			fmt.Fprintf(&b, "input %s {\n", t.Name)
			for _, f := range t.InputFields {
				fmt.Fprintf(&b, "  %s\n", f.sdl())
			}
			b.WriteString("}\n")
		case "OBJECT", "INTERFACE":
			word := map[string]string{"OBJECT": "type", "INTERFACE": "interface"}[t.Kind]
			fmt.Fprintf(&b, "%s %s", word, t.Name)
			if len(t.Interfaces) > 0 {
				var is []string
				for _, i := range t.Interfaces {
					is = append(is, i.Name)
				}
				b.WriteString(" implements " + strings.Join(is, " & "))
			}
			b.WriteString(" {\n")
			for _, f := range t.Fields {
				args := ""
				if len(f.Args) > 0 {
					var as []string
					for _, a := range f.Args {
						as = append(as, a.sdl())
					}
					args = "(" + strings.Join(as, ", ") + ")"
				}
				fmt.Fprintf(&b, "  %s%s: %s\n", f.Name, args, f.Type.sdl())
			}
			b.WriteString("}\n")
		}
	}
	return b.String(), nil
}

type introSchema struct {
	QueryType    *struct{ Name string } `json:"queryType"`
	MutationType *struct{ Name string } `json:"mutationType"`
	Types        []introType            `json:"types"`
}

type introType struct {
	Kind          string                  `json:"kind"`
	Name          string                  `json:"name"`
	Fields        []introField            `json:"fields"`
	InputFields   []introValue            `json:"inputFields"`
	Interfaces    []struct{ Name string } `json:"interfaces"`
	EnumValues    []struct{ Name string } `json:"enumValues"`
	PossibleTypes []struct{ Name string } `json:"possibleTypes"`
}

type introField struct {
	Name string       `json:"name"`
	Args []introValue `json:"args"`
	Type introRef     `json:"type"`
}

type introValue struct {
	Name         string   `json:"name"`
	Type         introRef `json:"type"`
	DefaultValue *string  `json:"defaultValue"`
}

func (v introValue) sdl() string {
	s := v.Name + ": " + v.Type.sdl()
	if v.DefaultValue != nil {
		s += " = " + *v.DefaultValue
	}
	return s
}

type introRef struct {
	Kind   string    `json:"kind"`
	Name   string    `json:"name"`
	OfType *introRef `json:"ofType"`
}

func (r introRef) sdl() string {
	switch {
	case r.Kind == "NON_NULL" && r.OfType != nil:
		return r.OfType.sdl() + "!"
	case r.Kind == "LIST" && r.OfType != nil:
		return "[" + r.OfType.sdl() + "]"
	}
	return r.Name
}
