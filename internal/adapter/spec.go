package adapter

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"countersign/internal/invisible"
	"countersign/internal/jsonkeys"
)

// Risk says whether an action's effect can be undone.
type Risk string

// The risks of an action.
const (
	// Reversible actions have a compensation or are harmless to repeat.
	Reversible Risk = "reversible"
	// Irreversible actions cannot be undone by the system.
	Irreversible Risk = "irreversible"
)

// ActionSpec is everything known about one write verb, in one place: the
// API, the MCP server, the approval forms and the docs all read it.
type ActionSpec struct {
	Name string `json:"name"`
	// Title is a short human name: "Cancel a subscription".
	Title string `json:"title"`
	// Description is what the model reads to decide when to use it.
	Description string  `json:"description"`
	Params      []Param `json:"-"`
	Risk        Risk    `json:"risk"`
	// Compensation names the action that undoes this one, if any.
	Compensation string `json:"compensation,omitempty"`
	// Limits lists, in words, the limits enforced server-side.
	Limits []string `json:"limits"`
	// Guidance is the procedure a competent person follows, for the model to
	// read before it chooses; the adapter enforces the same rules, so the
	// guidance informs and never protects.
	Guidance string `json:"guidance"`
	// TargetKind and TargetParam say which argument names the object acted on.
	TargetKind  string `json:"target_kind"`
	TargetParam string `json:"target_param"`
	// Concerns says whose object the action changes: the customer's own
	// (ConcernsCustomer, the zero value: their order, subscription,
	// account) or the business's (ConcernsBusiness: its catalogue), which
	// an operator changes. A customer's list of their requests shows only
	// actions that concern them.
	Concerns Concern `json:"concerns,omitempty"`
	// AmountParam names the money argument, if any, for amount limits.
	AmountParam string `json:"amount_param,omitempty"`
	// DefaultStage is the policy stage the action starts at when the
	// installation first gives it a policy: 3 (an agent approves), 4 (the
	// customer confirms) or 5 (automatic within limits). Zero is the safe
	// default, 3. A policy already set is never changed by it.
	DefaultStage int `json:"-"`
	// DoneWords is what the assistant tells the customer once the action is
	// done, without the full stop: "Refunded". Empty says "Done".
	DoneWords string `json:"-"`
	// RejectReasons are the preset reasons, each a sentence the assistant
	// passes on and the customer reads, an agent picks from to reject this
	// action; the console adds its general ones and Other after them.
	RejectReasons []string `json:"-"`
}

// Concern is whose object an action changes.
type Concern string

// The concerns of an action.
const (
	// ConcernsCustomer: the action changes one of the customer's own
	// objects; it is the zero value.
	ConcernsCustomer Concern = ""
	// ConcernsBusiness: the action changes the business's own objects (a
	// product in its catalogue), for its operators; it is no request of
	// the customer's.
	ConcernsBusiness Concern = "business"
)

// ForCustomer says whether the action is one of the customer's own, shown
// among their requests.
func (s ActionSpec) ForCustomer() bool { return s.Concerns == ConcernsCustomer }

// DefaultDoneWords is what a done action is called when its spec says nothing.
const DefaultDoneWords = "Done"

// Done is what the assistant calls the action once it is done: DoneWords,
// or DefaultDoneWords when the adapter gives none.
func (s ActionSpec) Done() string {
	if s.DoneWords == "" {
		return DefaultDoneWords
	}
	return s.DoneWords
}

// ReadToolSpec describes a read verb.
type ReadToolSpec struct {
	Name        string  `json:"name"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Params      []Param `json:"-"`
}

// Param describes one argument. Types are "string", "integer" and
// "object" (with Properties).
type Param struct {
	Name        string
	Type        string
	Description string
	Required    bool
	Enum        []string
	Min, Max    *int64
	MaxLength   int
	// Multiline lets a string hold newlines and tabs (a description);
	// every other invisible character is refused in every string.
	Multiline bool
	// PathSegment says the value may be placed in a URL path as one
	// segment: ValidateArgs refuses one that would leave its place
	// (MovesPath: ".", "..", a slash), naming it, before anything is read.
	PathSegment bool
	Properties  []Param
}

// Int64 is a helper for Param.Min and Param.Max.
func Int64(n int64) *int64 { return &n }

// Schema returns the action's arguments as a JSON Schema object.
func (s ActionSpec) Schema() map[string]any { return objectSchema(s.Params) }

// Schema returns the read tool's arguments as a JSON Schema object.
func (s ReadToolSpec) Schema() map[string]any { return objectSchema(s.Params) }

// Validate checks raw arguments strictly against the spec.
func (s ActionSpec) Validate(raw json.RawMessage) (map[string]any, error) {
	return ValidateArgs(s.Params, raw)
}

// Validate checks raw arguments strictly against the spec.
func (s ReadToolSpec) Validate(raw json.RawMessage) (map[string]any, error) {
	return ValidateArgs(s.Params, raw)
}

func objectSchema(params []Param) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, p := range params {
		props[p.Name] = paramSchema(p)
		if p.Required {
			required = append(required, p.Name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func paramSchema(p Param) map[string]any {
	if p.Type == "object" {
		m := objectSchema(p.Properties)
		m["description"] = p.Description
		return m
	}
	m := map[string]any{"type": p.Type, "description": p.Description}
	if len(p.Enum) > 0 {
		m["enum"] = p.Enum
	}
	if p.Min != nil {
		m["minimum"] = *p.Min
	}
	if p.Max != nil {
		m["maximum"] = *p.Max
	}
	if p.MaxLength > 0 {
		m["maxLength"] = p.MaxLength
	}
	return m
}

// maxArgsBytes bounds what an adapter will parse.
const maxArgsBytes = 64 << 10

// ValidateArgs decodes raw as a JSON object and checks it against params:
// no key twice, no unknown fields, required fields present, types, enums, ranges and
// lengths. It returns the normalised arguments (integers as int64) or an
// *Error naming every bad field and how to fix it.
func ValidateArgs(params []Param, raw json.RawMessage) (map[string]any, error) {
	if len(raw) > maxArgsBytes {
		return nil, Invalid(map[string]string{"": fmt.Sprintf("arguments are larger than %d bytes", maxArgsBytes)})
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		trimmed = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, Invalid(map[string]string{"": "arguments must be a JSON object: " + err.Error()})
	}
	if dec.More() {
		return nil, Invalid(map[string]string{"": "arguments must be a single JSON object"})
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, Invalid(map[string]string{"": "arguments must be a JSON object"})
	}
	// Decoding kept the last of two values for one key; a reader of the
	// first would take the arguments for others.
	if d, dup := jsonkeys.Duplicate(trimmed); dup {
		return nil, Invalid(map[string]string{d.Path: "appears twice; send each key once"})
	}
	fields := map[string]string{}
	out := validateObject(params, obj, "", fields)
	if len(fields) > 0 {
		return nil, Invalid(fields)
	}
	return out, nil
}

func validateObject(params []Param, obj map[string]any, prefix string, fields map[string]string) map[string]any {
	out := map[string]any{}
	known := map[string]Param{}
	for _, p := range params {
		known[p.Name] = p
	}
	for k := range obj {
		if _, ok := known[k]; !ok {
			names := make([]string, 0, len(params))
			for _, p := range params {
				names = append(names, p.Name)
			}
			fields[prefix+k] = "unknown field; this action takes only: " + strings.Join(names, ", ")
		}
	}
	for _, p := range params {
		name := prefix + p.Name
		val, present := obj[p.Name]
		if !present || val == nil {
			if p.Required {
				fields[name] = "required" + describe(p)
			}
			continue
		}
		if norm, msg := validateValue(p, val, name, fields); msg != "" {
			fields[name] = msg
		} else if norm != nil {
			out[p.Name] = norm
		}
	}
	return out
}

func validateValue(p Param, val any, name string, fields map[string]string) (any, string) {
	switch p.Type {
	case "string":
		s, ok := val.(string)
		if !ok {
			return nil, "must be a string" + describe(p)
		}
		if !utf8.ValidString(s) {
			return nil, "must be valid UTF-8 text"
		}
		if p.Multiline {
			s = strings.ReplaceAll(s, "\r\n", "\n")
		}
		s = strings.TrimSpace(invisible.NormaliseSpaces(s))
		if f, ok := invisible.Find(s, p.Multiline); ok {
			return nil, hiddenMessage(f)
		}
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, s) {
			return nil, fmt.Sprintf("%q is not allowed; use one of: %s", truncateValue(s), strings.Join(p.Enum, ", "))
		}
		if p.Required && s == "" {
			return nil, "must not be empty" + describe(p)
		}
		if p.MaxLength > 0 && utf8.RuneCountInString(s) > p.MaxLength {
			return nil, fmt.Sprintf("must be at most %d characters (got %d)", p.MaxLength, utf8.RuneCountInString(s))
		}
		if p.PathSegment && MovesPath(s) {
			return nil, PathSegmentProblem
		}
		return s, ""
	case "integer":
		n, ok := val.(json.Number)
		if !ok {
			return nil, "must be a whole number" + describe(p)
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			f, ferr := n.Float64()
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return nil, fmt.Sprintf("must be a whole number, not %s", truncateValue(n.String()))
			}
			i = int64(f)
		}
		if p.Min != nil && i < *p.Min {
			return nil, fmt.Sprintf("must be at least %d (got %d)", *p.Min, i)
		}
		if p.Max != nil && i > *p.Max {
			return nil, fmt.Sprintf("must be at most %d (got %d)", *p.Max, i)
		}
		return i, ""
	case "object":
		obj, ok := val.(map[string]any)
		if !ok {
			return nil, "must be an object" + describe(p)
		}
		return validateObject(p.Properties, obj, name+".", fields), ""
	}
	return nil, "has an unsupported type " + p.Type
}

// hiddenMessage is the field error of a string holding a character a
// person cannot see: the person deciding would read another text than the
// one sent, so it is refused, never silently removed.
func hiddenMessage(f invisible.Found) string {
	what := "invisible"
	if unicode.In(f.Rune, unicode.Bidi_Control) {
		what = "direction-changing"
	}
	return fmt.Sprintf("remove the %s character %s (%s) at position %d: a person would not see it in what they approve, so it is never sent",
		what, f.Code(), f.Name(), f.Position)
}

func describe(p Param) string {
	if len(p.Enum) > 0 {
		return "; one of: " + strings.Join(p.Enum, ", ")
	}
	if p.Description != "" {
		return " (" + p.Description + ")"
	}
	return ""
}

func truncateValue(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Canonical encodes validated arguments with sorted keys, so that the same
// values always give the same bytes (for deduplication and hashing).
func Canonical(args map[string]any) []byte {
	b, _ := json.Marshal(args) // encoding/json sorts map keys
	return b
}

// ArgsHash is the SHA-256 of args, a JSON object as a receipt carries
// it, in Canonical form with numbers as written: the hash the control
// plane keeps of the arguments it quotes and approves, recomputed by
// whoever holds only the JSON (the receipt's args_digest and its offline
// check). ok is false when args is not a JSON object.
func ArgsHash(args json.RawMessage) (sum []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	h := sha256.Sum256(Canonical(m))
	return h[:], true
}
