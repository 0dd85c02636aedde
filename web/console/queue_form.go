package console

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"countersign/internal/adapter"
	"countersign/internal/locale"
	"countersign/internal/money"
	"countersign/views"
)

// editFields generates the edit form of an action from its schema:
// enums become selects, amounts in cents money inputs in the task's
// currency ("34.50"), other integers number inputs, objects fieldsets;
// values come from the arguments (or from the user's last post).
func editFields(params []adapter.Param, args map[string]any, posted url.Values, prefix, currency string) []views.FormField {
	var out []views.FormField
	for _, p := range params {
		name := prefix + p.Name
		f := views.FormField{Name: name, ID: "f-" + strings.ReplaceAll(name, ".", "-"), Label: argLabel(p.Name),
			Description: p.Description, Required: p.Required}
		switch {
		case p.Type == "object":
			f.Kind = "fieldset"
			sub, _ := args[p.Name].(map[string]any)
			f.Children = editFields(p.Properties, sub, posted, name+".", currency)
		case isCents(p):
			// The schema describes the argument (in cents); the field
			// takes money, so say that instead.
			f.Kind = "money"
			f.Label += " (" + currencyLabel(currency) + ")"
			f.Description = say("console.rest.edit.money_hint", locale.Params{"Example": money.Example(currency)})
		case len(p.Enum) > 0:
			f.Kind, f.Options = "select", p.Enum
		case p.Type == "integer":
			f.Kind = "number"
			if p.Min != nil {
				f.Min = strconv.FormatInt(*p.Min, 10)
			}
			if p.Max != nil {
				f.Max = strconv.FormatInt(*p.Max, 10)
			}
		default:
			f.Kind = "text"
		}
		if f.Kind != "fieldset" {
			if posted != nil {
				f.Value = posted.Get(name)
			} else if v, ok := args[p.Name]; ok {
				f.Value = argText(v)
				if n, isNum := v.(float64); isNum && f.Kind == "money" {
					f.Value = money.Major(int64(n), currency)
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// isCents reports whether a parameter is an amount in minor units, which
// people read and write as money, never as cents.
func isCents(p adapter.Param) bool {
	return p.Type == "integer" && strings.HasSuffix(p.Name, "_cents")
}

// currencyLabel names the currency an amount field takes.
func currencyLabel(currency string) string {
	if currency == "" {
		return "amount"
	}
	return strings.ToUpper(currency)
}

// argsFromForm reads the edit form back into arguments by the schema.
// Empty optional fields are left out; a number that is not one is a field
// error under its form name.
func argsFromForm(params []adapter.Param, form url.Values, prefix, currency string, errs views.FieldErrors) map[string]any {
	out := map[string]any{}
	for _, p := range params {
		name := prefix + p.Name
		if p.Type == "object" {
			sub := argsFromForm(p.Properties, form, name+".", currency, errs)
			if len(sub) > 0 || p.Required {
				out[p.Name] = sub
			}
			continue
		}
		raw := strings.TrimSpace(form.Get(name))
		if raw == "" {
			if p.Required {
				errs[name] = say("console.rest.edit.error.required", nil)
			}
			continue
		}
		if isCents(p) {
			c, err := money.Parse(raw, currency)
			if err != nil {
				errs[name] = say("console.rest.edit.error.amount", locale.Params{"Example": money.Example(currency)})
				continue
			}
			out[p.Name] = c
			continue
		}
		if p.Type == "integer" {
			n, err := strconv.ParseInt(raw, 10, 64)
			if err != nil {
				errs[name] = say("console.rest.edit.error.whole_number", nil)
				continue
			}
			out[p.Name] = n
			continue
		}
		out[p.Name] = raw
	}
	return out
}

// argsMap decodes raw arguments for the form.
func argsMap(raw json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// argChanges lists the arguments that differ between two argument sets.
func argChanges(before, after json.RawMessage, currency string) []views.ArgChange {
	b, a := flattenArgs(before, currency), flattenArgs(after, currency)
	old := map[string]string{}
	for _, x := range b {
		old[x.Name] = x.Value
	}
	seen := map[string]bool{}
	var out []views.ArgChange
	for _, x := range a {
		seen[x.Name] = true
		if old[x.Name] != x.Value {
			out = append(out, views.ArgChange{Name: x.Name, From: old[x.Name], To: x.Value})
		}
	}
	for _, x := range b {
		if !seen[x.Name] {
			out = append(out, views.ArgChange{Name: x.Name, From: x.Value, To: "(removed)"})
		}
	}
	return out
}

// changedLines names the quote lines whose values differ between quotes.
func changedLines(before, after adapter.Quote) map[string]bool {
	old := map[string]adapter.QuoteLine{}
	for _, l := range before.Lines {
		old[l.Label] = l
	}
	out := map[string]bool{}
	for _, l := range after.Lines {
		if o, ok := old[l.Label]; !ok || o.To != l.To || o.From != l.From {
			out[l.Label] = true
		}
	}
	return out
}
