package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"countersign/internal/adapter"
)

// FixtureFile is a Fixture written as JSON, for a live run
// (`countersign conformance -fixtures FILE`): the system's own test
// objects, named as a person would.
type FixtureFile struct {
	Principal string       `json:"principal"`
	Other     string       `json:"other"`
	Resolve   RefFile      `json:"resolve"`
	Ambiguous RefFile      `json:"ambiguous"`
	Foreign   RefFile      `json:"foreign"`
	Write     CallFile     `json:"write"`
	Refused   CallFile     `json:"refused"`
	Refusal   AnswerFile   `json:"refusal"`
	Reads     []ReadFile   `json:"reads"`
	Forbidden []string     `json:"forbidden"`
	Every     []VariedFile `json:"every"`
	// Effects says where the live system lists its effects by key, when
	// the adapter's own description does not (or to read them otherwise).
	Effects *EffectsFile `json:"effects"`
	// FaultRoute is LiveOptions.FaultRoute.
	FaultRoute string `json:"fault_route"`
}

// RefFile is a Reference.
type RefFile struct {
	Kind   string `json:"kind"`
	Ref    string `json:"ref"`
	WantID string `json:"want_id"`
}

// CallFile is a Call; Principal empty means the fixture's.
type CallFile struct {
	Principal string         `json:"principal"`
	Action    string         `json:"action"`
	Args      map[string]any `json:"args"`
}

// AnswerFile is an Answer; Body is the JSON the system answers with.
type AnswerFile struct {
	Status   int             `json:"status"`
	Body     json.RawMessage `json:"body"`
	WantCode string          `json:"want_code"`
}

// ReadFile is a Read.
type ReadFile struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

// VariedFile is a Varied.
type VariedFile struct {
	CallFile
	Other       map[string][]any `json:"other"`
	OtherTarget *CallFile        `json:"other_target"`
}

// EffectsFile is where a system lists the effects it recorded: Path with
// {key} (the key URL-escaped), Items a JSON Pointer to the list in the
// answer ("" the answer itself), All a path listing every effect (for the
// dry-run check), optional.
type EffectsFile struct {
	Path  string `json:"path"`
	Items string `json:"items"`
	All   string `json:"all"`
	// Total, optional, is a JSON Pointer to the count of every matching
	// effect in the answer (PocketBase's "/totalItems"), for a system that
	// answers a list one page at a time; the list's length counts otherwise.
	Total string `json:"total"`
}

// LoadFixture reads a fixture file; the error names every field missing.
func LoadFixture(path string) (Fixture, FixtureFile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Fixture{}, FixtureFile{}, err
	}
	var f FixtureFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Fixture{}, FixtureFile{}, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	var errs []error
	need := func(ok bool, field, what string) {
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %s is missing (fix: %s)", filepath.Base(path), field, what))
		}
	}
	need(f.Principal != "", "principal", "the e-mail of the test customer the checks act for")
	need(f.Other != "", "other", "the e-mail of another test customer")
	need(f.Resolve.Kind != "" && f.Resolve.Ref != "", "resolve", `{"kind", "ref"}: words naming exactly one of the principal's objects`)
	need(f.Ambiguous.Kind != "" && f.Ambiguous.Ref != "", "ambiguous", `{"kind", "ref"}: words naming two or more of the principal's objects`)
	need(f.Foreign.Kind != "" && f.Foreign.Ref != "", "foreign", `{"kind", "ref"}: words naming one of the other customer's objects`)
	need(f.Write.Action != "", "write", `{"action", "args"}: a write that succeeds several times in a row (the run makes it about five times)`)
	need(f.Refused.Action != "", "refused", `{"action", "args"}: a call the dry run refuses`)
	need(f.Refusal.Status >= 400 && f.Refusal.Status < 500, "refusal", `{"status", "body", "want_code"}: a 4xx answer the system gives the write, and the code it maps to`)
	need(len(f.Every) > 0, "every", `a valid call of each write action, [{"action", "args", "other"}]`)
	if err := errors.Join(errs...); err != nil {
		return Fixture{}, FixtureFile{}, err
	}
	body := string(f.Refusal.Body)
	var s string
	if json.Unmarshal(f.Refusal.Body, &s) == nil {
		body = s
	}
	fix := Fixture{
		Principal: adapter.Principal{CustomerRef: f.Principal},
		Other:     adapter.Principal{CustomerRef: f.Other},
		Resolve:   f.Resolve.ref(), Ambiguous: f.Ambiguous.ref(), Foreign: f.Foreign.ref(),
		Write: f.Write.call(), Refused: f.Refused.call(),
		Refusal:   Answer{Status: f.Refusal.Status, Body: body, WantCode: f.Refusal.WantCode},
		Forbidden: f.Forbidden,
	}
	for _, r := range f.Reads {
		fix.Reads = append(fix.Reads, Read{Tool: r.Tool, Args: orEmpty(r.Args)})
	}
	for _, v := range f.Every {
		vv := Varied{Call: v.call(), Other: v.Other}
		if v.OtherTarget != nil {
			c := v.OtherTarget.call()
			vv.OtherTarget = &c
		}
		fix.Every = append(fix.Every, vv)
	}
	return fix, f, nil
}

func (r RefFile) ref() Reference { return Reference(r) }

func (c CallFile) call() Call {
	return Call{Principal: adapter.Principal{CustomerRef: c.Principal}, Action: c.Action, Args: orEmpty(c.Args)}
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
