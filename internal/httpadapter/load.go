package httpadapter

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is the JSON Schema of a description file.
//
//go:embed schema.json
var Schema []byte

// FileError is one problem of a description file: where, what, and how to
// fix it.
type FileError struct {
	File    string
	Line    int
	Pointer string
	Problem string
	Fix     string
}

func (e *FileError) Error() string {
	s := fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, displayPointer(e.Pointer), e.Problem)
	if e.Fix != "" {
		s += " (fix: " + e.Fix + ")"
	}
	return s
}

func displayPointer(p string) string {
	if p == "" {
		return "the file"
	}
	return p
}

var schema = func() *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		panic("httpadapter: schema.json: " + err.Error())
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("system.json", doc); err != nil {
		panic("httpadapter: schema.json: " + err.Error())
	}
	return c.MustCompile("system.json")
}()

var schemaDoc = func() any {
	var v any
	_ = json.Unmarshal(Schema, &v)
	return v
}()

// LoadDir loads every *.json file of dir, in name order, as one system
// each. It fails with every file's problems when any file is invalid.
func LoadDir(dir string, cfg Config) ([]*Adapter, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("httpadapter: list %s: %w", dir, err)
	}
	slices.Sort(files)
	var out []*Adapter
	var errs []error
	names := map[string]string{}
	for _, f := range files {
		a, err := LoadFile(f, cfg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, ok := names[a.Name()]; ok {
			errs = append(errs, &FileError{File: f, Line: 1, Pointer: "/name",
				Problem: fmt.Sprintf("the system name %q is already used by %s", a.Name(), prev), Fix: "give each file its own name"})
			continue
		}
		names[a.Name()] = f
		out = append(out, a)
	}
	return out, errors.Join(errs...)
}

// LoadFile reads, validates and connects one description file.
func LoadFile(path string, cfg Config) (*Adapter, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("httpadapter: %w", err)
	}
	return Load(filepath.Base(path), raw, cfg)
}

// Load validates raw against Schema and the rules a schema cannot say
// (expressions compile, kinds and actions named exist, the environment
// holds every secret), then builds the adapter. The error lists every
// problem as a *FileError naming file, line and fix.
func Load(file string, raw []byte, cfg Config) (*Adapter, error) {
	pos := locate(raw)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &FileError{File: file, Line: syntaxLine(raw, err), Problem: "not valid JSON: " + err.Error(),
			Fix: "check the commas, quotes and brackets around that line"}
	}
	if err := schema.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return nil, schemaErrors(file, pos, ve)
		}
		return nil, err
	}
	var d Description
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&d); err != nil {
		return nil, &FileError{File: file, Line: 1, Problem: err.Error()}
	}
	return build(file, pos, &d, cfg)
}

func syntaxLine(raw []byte, err error) int {
	var se *json.SyntaxError
	if errors.As(err, &se) && int(se.Offset) <= len(raw) {
		return bytes.Count(raw[:se.Offset], []byte("\n")) + 1
	}
	return 1
}

var printer = message.NewPrinter(language.English)

// schemaErrors flattens a validation error into its leaves, each with the
// line of the value and the schema's description of the field as the fix.
func schemaErrors(file string, pos positions, ve *jsonschema.ValidationError) error {
	var errs []error
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		ptr := pointer(e.InstanceLocation...)
		if extra, ok := e.ErrorKind.(*kind.AdditionalProperties); ok && len(extra.Properties) == 1 {
			ptr += "/" + escapePointer(extra.Properties[0])
		}
		fe := &FileError{File: file, Line: pos.line(ptr), Pointer: ptr,
			Problem: e.ErrorKind.LocalizedString(printer), Fix: schemaFix(e.SchemaURL)}
		if k := fe.Error(); !seen[k] {
			seen[k] = true
			errs = append(errs, fe)
		}
	}
	walk(ve)
	return errors.Join(errs...)
}

// schemaFix finds the description nearest to the schema location.
func schemaFix(url string) string {
	_, frag, _ := strings.Cut(url, "#")
	for {
		if v, ok := lookupPointer(schemaDoc, frag); ok {
			if m, ok := v.(map[string]any); ok {
				if d, ok := m["description"].(string); ok {
					return d
				}
				if r, ok := m["$ref"].(string); ok {
					if def, ok := lookupPointer(schemaDoc, strings.TrimPrefix(r, "#")); ok {
						if d, ok := def.(map[string]any)["description"].(string); ok {
							return d
						}
					}
				}
			}
		}
		i := strings.LastIndexByte(frag, '/')
		if i < 0 {
			return ""
		}
		frag = frag[:i]
	}
}
