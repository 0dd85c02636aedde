package httpadapter

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// gqlInput is one input of a mutation: an argument, or a field of its
// one input object.
type gqlInput struct {
	name, description string
	typ               *ast.Type
}

// userErrorsField names a payload's list of user errors.
var userErrorsField = regexp.MustCompile(`(?i)^(user_?)?errors$`)

// keyInput names an input that carries an idempotency key.
var keyInput = regexp.MustCompile(`(?i)^(idempotency_?key|client_?mutation_?id|request_?id)$`)

// action drafts the write action of mutation m: its inputs are the
// parameters (the one naming an object kind's id its target, one named
// like an idempotency key the call's key), sent as the variables, and its
// payload's object and userErrors are where the answer is.
func (d *gqlDrafter) action(m string) (obj, error) {
	var mf *ast.FieldDefinition
	if d.schema.Mutation != nil {
		mf = d.schema.Mutation.Fields.ForName(m)
	}
	if mf == nil {
		return nil, fmt.Errorf("-write %s: the schema has no mutation of that name (fix: use one of %s)", m, strings.Join(d.mutations(), ", "))
	}
	name := snake(m, false)
	var inputs []gqlInput
	wrap := ""
	if len(mf.Arguments) == 1 {
		if def := d.schema.Types[mf.Arguments[0].Type.Name()]; def != nil && def.Kind == ast.InputObject {
			wrap = mf.Arguments[0].Name
			for _, f := range def.Fields {
				inputs = append(inputs, gqlInput{f.Name, f.Description, f.Type})
			}
		}
	}
	if wrap == "" {
		for _, a := range mf.Arguments {
			inputs = append(inputs, gqlInput{a.Name, a.Description, a.Type})
		}
	}
	kind, targetInput := d.target(inputs)
	if kind == nil {
		return nil, fmt.Errorf("-write %s: the draft cannot tell which object it changes: no input is the id of an object kind (%s) as <kind>Id (fix: choose a mutation on one object, or write the action by hand: an action changes one object)",
			m, strings.Join(slices.Sorted(maps.Keys(d.kinds)), ", "))
	}
	targetParam := kind.name + "_id"
	params := []any{obj{{"name", targetParam}, {"type", "string"}, {"required", true}, {"max_length", 200},
		{"description", "The " + strings.ReplaceAll(kind.name, "_", " ") + "'s id, or the customer's words for it."}}}
	var lines []any
	values := obj{}
	keyed, amount := false, ""
	verify := obj{}
	money := d.money(m, kind, inputs)
	for _, in := range inputs {
		switch {
		case in.name == targetInput:
			values = append(values, kv{in.name, "target.id"})
			continue
		case keyInput.MatchString(in.name):
			values, keyed = append(values, kv{in.name, "key"}), true
			continue
		case !in.typ.NonNull:
			d.note("mutation %s: the optional input %s is not sent; add it as a parameter if it is needed", m, in.name)
			continue
		case money != nil && in.name == money.field:
			params, amount = append(params, money.spec()), money.param
			lines = append(lines, money.line())
			values = append(values, kv{in.name, money.value()})
			continue
		}
		pt := paramType(d.schema.Types[in.typ.Name()])
		if pt == "" || in.typ.Elem != nil {
			values = append(values, kv{in.name, "'" + todo + "the value of " + in.name + " (" + in.typ.String() + ")'"})
			d.note("mutation %s: the input %s (%s) is left as a TODO value", m, in.name, in.typ)
			continue
		}
		pn := snake(in.name, false)
		p := obj{{"name", pn}, {"type", pt}, {"required", true}, {"description", orDefault(strings.TrimSpace(in.description), "The "+in.name+".")}}
		if pt == "string" {
			p = append(p, kv{"max_length", 200})
		}
		if pt == "integer" && amount == "" && (strings.HasSuffix(pn, "_cents") || pn == "amount") {
			amount = pn
		}
		params = append(params, p)
		lines = append(lines, obj{{"label", label(in.name)}, {"to", "{args." + pn + "}"}})
		values = append(values, kv{in.name, "args." + pn})
		if kind.typ.Fields.ForName(in.name) != nil {
			verify = append(verify, kv{"/" + in.name, "args." + pn})
		}
	}
	d.keyed(keyed)
	if len(lines) == 0 {
		lines = append(lines, obj{{"label", todo + "what changes"}, {"to", "{target.id}"}})
	}
	request, reference := d.mutation(mf, wrap, values)
	if len(verify) == 0 {
		verify = obj{{"/TODO", "'" + todo + "the value read back once " + name + " has landed, e.g. args.status'"}}
	}
	a := obj{
		{"name", name},
		{"title", label(m)},
		{"description", orDefault(strings.TrimSpace(mf.Description), todo+"say in a sentence what "+name+" changes and what it never changes.")},
		{"guidance", todo + "say when the assistant should use it, what to ask the customer first, and what to say when it is refused."},
		{"risk", "irreversible"},
		{"params", params},
		{"target", obj{{"kind", kind.name}, {"param", targetParam}}},
	}
	if amount != "" {
		a = append(a, kv{"amount_param", amount})
	}
	return append(a, obj{
		{"guards", []any{obj{{"require", "true"}, {"code", "todo_guard"},
			{"message", todo + "write the rule that must hold before " + name + " (require: a CEL expression over args and target), or remove this guard."},
			{"hint", todo + "say what the assistant can do instead."}}}},
		{"quote", money.quoteOf(obj{
			{"title", todo + "say what changes, e.g. " + label(m) + " for " + strings.ReplaceAll(kind.name, "_", " ") + " {target.id}"},
			{"lines", lines},
			{"consequences", []any{todo + "say in a sentence what happens once this is done."}},
			{"confirm_label", "Confirm"},
			{"decline_label", "Don't change it"},
		})},
		{"request", obj{{"graphql", request}}},
		{"result", obj{{"reference", reference}}},
		{"verify", obj{{"graphql", obj{{"query", kind.query}, {"variables", obj{{"id", "target.id"}}}, {"data", kind.field.Name}}},
			{"fields", verify}}},
	}...), nil
}

// money finds the mutation's first required amount beside a currency
// (a required input, or the target's field) and notes what it assumed of
// its unit: an Int in minor units, a Float, a String or a decimal scalar
// in whole units; nil when none.
func (d *gqlDrafter) money(m string, kind *gqlKind, inputs []gqlInput) *moneyField {
	var siblings []string
	for _, in := range inputs {
		if in.typ.NonNull && in.typ.Elem == nil && paramType(d.schema.Types[in.typ.Name()]) == "string" {
			siblings = append(siblings, in.name)
		}
	}
	var targets []string
	for _, f := range kind.typ.Fields {
		targets = append(targets, f.Name)
	}
	for _, in := range inputs {
		if !in.typ.NonNull || in.typ.Elem != nil || !isAmount(in.name) {
			continue
		}
		cur := currencyOf("args.", siblings...)
		if cur == "" {
			cur = currencyOf("target.", targets...)
		}
		mf := &moneyField{field: in.name, param: snake(in.name, false) + "_cents", currency: cur}
		scalar := d.schema.Types[in.typ.Name()]
		t, format := "", ""
		switch n := in.typ.Name(); {
		case n == "Int":
			t = "integer"
		case n == "Float":
			t = "number"
		case scalar != nil && scalar.Kind == ast.Scalar && n != "ID" && n != "Boolean":
			t = "string"
			if strings.Contains(strings.ToLower(n), "decimal") {
				format = "scalar " + n
			}
		}
		if cur == "" || !mf.unit(t, in.description, "") {
			continue
		}
		if format != "" && mf.said == "" {
			mf.said = format
		}
		d.note("%s", mf.note("mutation "+m+": input "+in.name, "schema"))
		return mf
	}
	return nil
}

// keyed records whether an action sends the key in its variables: the
// file carries it in_request when every action does, else in the
// Idempotency-Key header.
func (d *gqlDrafter) keyed(k bool) {
	if k && (d.idempotency == nil || d.idempotency[0].k == "in_request") {
		d.idempotency = obj{{"in_request", true}}
		return
	}
	if !k {
		if d.idempotency == nil || d.idempotency[0].k == "in_request" {
			d.note("a mutation takes no idempotency key input, so the key goes in the Idempotency-Key header: check that the system honours it")
		}
		d.idempotency = obj{{"header", "Idempotency-Key"}}
	}
}

// target finds the input that is an object kind's id: <kind>Id, or id
// when there is one kind.
func (d *gqlDrafter) target(inputs []gqlInput) (*gqlKind, string) {
	for _, in := range inputs {
		if n := in.typ.Name(); n != "ID" && n != "String" {
			continue
		}
		if k := d.kinds[strings.TrimSuffix(snake(in.name, false), "_id")]; k != nil && strings.HasSuffix(snake(in.name, false), "_id") {
			return k, in.name
		}
		if in.name == "id" && len(d.kinds) == 1 {
			for _, k := range d.kinds {
				return k, in.name
			}
		}
	}
	return nil, ""
}

// mutation writes the request's operation: the variables as one input
// object (a CEL map) or as arguments, and the payload's object and user
// errors selected.
func (d *gqlDrafter) mutation(mf *ast.FieldDefinition, wrap string, values obj) (op obj, reference string) {
	var decls, args []string
	vars := obj{}
	if wrap != "" {
		a := mf.Arguments[0]
		decls, args = []string{"$" + a.Name + ": " + a.Type.String()}, []string{a.Name + ": $" + a.Name}
		var fields []string
		for _, v := range values {
			fields = append(fields, fmt.Sprintf("'%s': %s", v.k, v.v))
		}
		vars = obj{{a.Name, "{" + strings.Join(fields, ", ") + "}"}}
	} else {
		for _, a := range mf.Arguments {
			i := slices.IndexFunc(values, func(v kv) bool { return v.k == a.Name })
			if i < 0 {
				continue
			}
			decls, args = append(decls, "$"+a.Name+": "+a.Type.String()), append(args, a.Name+": $"+a.Name)
			vars = append(vars, values[i])
		}
	}
	call := mf.Name
	if len(args) > 0 {
		call += "(" + strings.Join(args, ", ") + ")"
	}
	head := "mutation " + upperFirst(mf.Name)
	if len(decls) > 0 {
		head += "(" + strings.Join(decls, ", ") + ")"
	}
	payload := d.schema.Types[mf.Type.Name()]
	data := mf.Name
	reference = snake(mf.Name, false) + "_{short_hash(key)}"
	if payload == nil || payload.Kind != ast.Object {
		op = append(op, kv{"query", head + " { " + call + " }"})
	} else {
		var sel []string
		var userErrors string
		for _, f := range payload.Fields {
			t := d.schema.Types[f.Type.Name()]
			if t == nil || t.Kind != ast.Object {
				continue
			}
			switch {
			case f.Type.Elem != nil && userErrorsField.MatchString(f.Name) && userErrors == "":
				userErrors = f.Name
				sel = append(sel, f.Name+" { "+strings.Join(d.selection(t), " ")+" }")
			case f.Type.Elem == nil && data == mf.Name:
				data = mf.Name + "." + f.Name
				sel = append(sel, f.Name+" { "+strings.Join(d.selection(t), " ")+" }")
				if t.Fields.ForName("id") != nil {
					reference = "{response.id}"
				}
			}
		}
		if len(sel) == 0 {
			sel = d.selection(payload)
		}
		op = append(op, kv{"query", head + " { " + call + " { " + strings.Join(sel, " ") + " } }"}, kv{"variables", vars}, kv{"data", data})
		if userErrors != "" {
			op = append(op, kv{"user_errors", mf.Name + "." + userErrors})
		}
		return op, reference
	}
	return append(op, kv{"variables", vars}, kv{"data", data}), reference
}
