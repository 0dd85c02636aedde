package httpadapter

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// action drafts the write action of one operation: its target is the
// object kind its path (or a <kind>_id body field) names, its parameters
// the body's writable fields, each shown on a quote line.
func (d *drafter) action(id string) (obj, error) {
	op := d.operation(id)
	if op == nil {
		return nil, fmt.Errorf("-write %s: the document has no operation with that operationId (fix: use one of %s)", id, strings.Join(d.writeCandidates(), ", "))
	}
	if op.method == "GET" {
		return nil, fmt.Errorf("-write %s: it is GET %s, a read, drafted as a read tool (fix: -write takes a POST, PUT, PATCH or DELETE: %s)", id, op.path, strings.Join(d.writeCandidates(), ", "))
	}
	name := snake(op.OperationID, false)
	if name == "" || len(name) > 64 {
		return nil, fmt.Errorf("-write %s (%s %s): the operationId makes no action name [a-z][a-z0-9_]* of at most 64 characters (fix: give the operation a shorter operationId)", id, op.method, op.path)
	}
	kind, idParam, bodyTarget := d.target(op)
	if kind == nil {
		return nil, fmt.Errorf("-write %s (%s %s): the draft cannot tell which object it changes: its path has no {id} of an object kind read by a GET (%s), and its body has no <kind>_id field (fix: choose an operation on one object, e.g. POST /things/{id}/..., or write the action by hand: an action changes one object)", id, op.method, op.path, strings.Join(slices.Sorted(maps.Keys(d.kinds)), ", "))
	}
	targetParam := kind.name + "_id"
	targetExpr := "target." + kind.id
	params := []any{obj{{"name", targetParam}, {"type", "string"}, {"required", true}, {"max_length", 200},
		{"description", "The " + strings.ReplaceAll(kind.name, "_", " ") + "'s id, or the customer's words for it."}}}
	var lines []any
	for _, p := range op.pathParams() {
		if p.Name == idParam || fixedValue(op, p.Name) != "{"+p.Name+"}" {
			continue
		}
		pn := snake(p.Name, false)
		params = append(params, paramOf(pn, p.Schema, orDefault(p.Description, "The "+p.Name+"."), true))
		lines = append(lines, obj{{"label", label(p.Name)}, {"to", "{args." + pn + "}"}})
	}
	b, err := d.body(op, kind, bodyTarget, targetExpr)
	if err != nil {
		return nil, err
	}
	verify, amount := b.verify, ""
	if b.money != nil {
		amount = b.money.param
	}
	params = append(params, b.params...)
	lines = append(lines, b.lines...)
	if len(lines) == 0 {
		lines = append(lines, obj{{"label", todo + "what changes"}, {"to", "{" + targetExpr + "}"}})
	}
	what := orDefault(op.Summary, strings.ReplaceAll(name, "_", " "))
	request := obj{{"method", op.method}, {"path", d.path(op, idParam, targetExpr)}}
	if b.form {
		request = append(request, kv{"body_encoding", "form"})
		if b.style != "" {
			request = append(request, kv{"form_style", string(b.style)})
		}
	}
	if b.body != nil {
		request = append(request, kv{"body", b.body})
	}
	reference := name + "_{short_hash(key)}"
	if s := op.success(); s != nil {
		if props, _ := s.fields(); props["id"] != nil {
			reference = "{response.id}"
		}
	}
	if len(verify) == 0 {
		verify = obj{{"/TODO", "'" + todo + "the value read back once " + name + " has landed, e.g. args.status'"}}
	}
	a := obj{
		{"name", name},
		{"title", what},
		{"description", orDefault(strings.TrimSpace(op.Description), todo+"say in a sentence what "+name+" changes and what it never changes.")},
		{"guidance", todo + "say when the assistant should use it, what to ask the customer first, and what to say when it is refused."},
		{"risk", "irreversible"},
		{"params", params},
		{"target", obj{{"kind", kind.name}, {"param", targetParam}}},
	}
	if amount != "" {
		// The money the action moves: the policy's max amount applies to it.
		a = append(a, kv{"amount_param", amount})
	}
	return append(a, obj{
		{"guards", []any{obj{{"require", "true"}, {"code", "todo_guard"},
			{"message", todo + "write the rule that must hold before " + name + " (require: a CEL expression over args and target), or remove this guard."},
			{"hint", todo + "say what the assistant can do instead."}}}},
		{"quote", b.money.quoteOf(obj{
			{"title", todo + "say what changes, e.g. " + what + " for " + strings.ReplaceAll(kind.name, "_", " ") + " {" + targetExpr + "}"},
			{"lines", lines},
			{"consequences", []any{todo + "say in a sentence what happens once this is done."}},
			{"confirm_label", "Confirm"},
			{"decline_label", "Don't change it"},
		})},
		{"request", request},
		{"result", obj{{"reference", reference}}},
		{"verify", obj{{"path", d.path(kind.op, kind.param, targetExpr)}, {"fields", verify}}},
	}...), nil
}

func (d *drafter) operation(id string) *oaOperation {
	for _, op := range d.ops {
		if op.OperationID == id {
			return op
		}
	}
	return nil
}

// target finds the object kind an operation changes: the longest kind's
// GET path its own path begins with, or a <kind>_id field of its body.
func (d *drafter) target(op *oaOperation) (kind *draftKind, idParam, bodyField string) {
	norm := func(p string) string { return pathParam.ReplaceAllString(p, "{}") }
	for _, k := range d.kinds {
		kp := norm(k.op.path)
		if p := norm(op.path); p != kp && !strings.HasPrefix(p, kp+"/") {
			continue
		}
		if kind == nil || len(kp) > len(norm(kind.op.path)) {
			kind = k
			idParam = pathParam.FindAllStringSubmatch(op.path, -1)[strings.Count(kp, "{}")-1][1]
		}
	}
	if kind != nil {
		return kind, idParam, ""
	}
	s, _ := d.requestSchema(op)
	if s == nil {
		return nil, "", ""
	}
	props, _ := s.fields()
	for _, n := range slices.Sorted(maps.Keys(props)) {
		for _, k := range slices.Sorted(maps.Keys(d.kinds)) {
			// Stripe names the charge a refund is of "charge", a string.
			if sn := snake(n, false); sn == k+"_id" || (sn == k && props[n].typeName() == "string") {
				return d.kinds[k], "", n
			}
		}
	}
	return nil, "", ""
}

// requestSchema is the schema of the operation's JSON body, or of its
// form body (form) when it offers no JSON.
func (d *drafter) requestSchema(op *oaOperation) (s *oaSchema, form *oaMedia) {
	if op.RequestBody == nil {
		return nil, nil
	}
	if f := formMedia(op.RequestBody.Content); f != nil {
		return f.Schema, f
	}
	return jsonSchema(op.RequestBody.Content), nil
}

// draftBody is an action's drafted request body and what follows from it.
type draftBody struct {
	body, verify  obj
	params, lines []any
	// money is the body's amount of money, nil when it has none.
	money *moneyField
	// form says the body is sent form-encoded, in style ("" when it holds
	// no object nor list, so that any style sends it the same).
	form  bool
	style formStyle
}

// body drafts the request body from the operation's body schema (JSON,
// or a form when the document offers only that): each writable field a
// parameter, sent as given and shown on a line (from the target's field
// of that name when it has one), and compared on the read-back when the
// target has it. A form's lists of single values are sent as lists, in
// the style formStyle chooses.
func (d *drafter) body(op *oaOperation, kind *draftKind, bodyTarget, targetExpr string) (b draftBody, err error) {
	s, form := d.requestSchema(op)
	if s == nil {
		return b, nil
	}
	if s.typeName() != "object" {
		encoding := "JSON"
		if form != nil {
			encoding = "form"
		}
		return b, fmt.Errorf("-write %s (%s %s): its body is a %s %s, not an object (fix: write the action's request by hand)", op.name(), op.method, op.path, encoding, orDefault(s.typeName(), "value"))
	}
	props, _ := s.fields()
	targetProps, _ := kind.schema.fields()
	b.money = d.money(op, props, targetProps)
	b.body = obj{}
	b.form = form != nil
	fc := formChoice{op: op}
	for _, n := range slices.Sorted(maps.Keys(props)) {
		p := props[n]
		if n == bodyTarget {
			b.body = append(b.body, kv{n, "{" + targetExpr + "}"})
			continue
		}
		if p.ReadOnly || n == kind.id {
			continue
		}
		if m := b.money; m != nil && n == m.field {
			b.params = append(b.params, m.spec())
			b.body = append(b.body, kv{n, "{" + m.value() + "}"})
			b.lines = append(b.lines, m.line())
			continue
		}
		pn := snake(n, false)
		desc := orDefault(p.Description, label(n)+".")
		param := paramOf(pn, p, desc, true)
		var value any = "{args." + pn + "}"
		if form != nil && p.typeName() == "array" && pn != "" {
			param, value = fc.list(d, n, pn, p, desc, form.Encoding[n])
		}
		if param == nil || pn == "" {
			d.note("-write %s: body field %s (%s) is left out: parameters are strings, integers and objects; send it by hand.", op.name(), n, p.typeName())
			continue
		}
		if p.typeName() == "boolean" {
			value = "{args." + pn + " == 'true'}"
		}
		if form != nil && p.typeName() == "object" {
			fc.object(n, form.Encoding[n])
		}
		b.params = append(b.params, param)
		b.body = append(b.body, kv{n, value})
		if t := p.typeName(); b.money == nil && (t == "integer" || t == "number") && strings.HasSuffix(pn, "_cents") {
			b.money = &moneyField{param: pn}
		}
		line := obj{{"label", label(n)}}
		if tp := targetProps[n]; tp != nil && celName.MatchString(n) {
			line = append(line, kv{"from", "{target." + n + "}"})
			if t := p.typeName(); t != "object" && t != "array" {
				b.verify = append(b.verify, kv{"/" + escapePointer(n), strings.Trim(value.(string), "{}")})
			}
		}
		b.lines = append(b.lines, append(line, kv{"to", "{args." + pn + "}"}))
	}
	if len(b.params) > 0 {
		d.note("-write %s: every body field is a required parameter; narrow the action to what it changes.", op.name())
	}
	if b.form {
		b.style = fc.style(d)
	}
	return b, nil
}

// money finds the body's first amount beside a currency (a body field, or
// the target's) and notes what it assumed of its unit; nil when none.
func (d *drafter) money(op *oaOperation, props, targetProps map[string]*oaSchema) *moneyField {
	var sent []string // the body's fields that become string parameters
	for _, n := range slices.Sorted(maps.Keys(props)) {
		if p := props[n]; !p.ReadOnly && p.typeName() == "string" {
			sent = append(sent, n)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(props)) {
		p := props[n]
		if p.ReadOnly || !isAmount(n) {
			continue
		}
		cur := currencyOf("args.", sent...)
		if cur == "" {
			cur = currencyOf("target.", slices.Sorted(maps.Keys(targetProps))...)
		}
		m := &moneyField{field: n, param: snake(n, false) + "_cents", currency: cur}
		if cur == "" || !m.unit(p.typeName(), p.Description, p.Format) {
			continue
		}
		d.note("%s", m.note("-write "+op.name()+": body field "+n, "document"))
		return m
	}
	return nil
}

// paramOf maps a schema to a parameter; nil for types the format lacks.
func paramOf(name string, s *oaSchema, desc string, required bool) any {
	if s == nil {
		s = &oaSchema{Type: "string"}
	}
	p := obj{{"name", name}}
	switch s.typeName() {
	case "string", "":
		p = append(p, kv{"type", "string"})
		if len(s.Enum) > 0 {
			var enum []string
			for _, e := range s.Enum {
				if e != nil {
					enum = append(enum, fmt.Sprint(e))
				}
			}
			p = append(p, kv{"enum", enum})
		}
		maxLen := 200
		if s.MaxLength != nil {
			maxLen = *s.MaxLength
		}
		p = append(p, kv{"max_length", maxLen})
	case "integer", "number":
		p = append(p, kv{"type", "integer"})
		if s.Minimum != nil {
			p = append(p, kv{"minimum", int64(*s.Minimum)})
		}
		if s.Maximum != nil {
			p = append(p, kv{"maximum", int64(*s.Maximum)})
		}
	case "boolean":
		p = append(p, kv{"type", "string"}, kv{"enum", []string{"true", "false"}})
	case "object":
		props, req := s.fields()
		var sub []any
		for _, n := range slices.Sorted(maps.Keys(props)) {
			if c := paramOf(snake(n, false), props[n], orDefault(props[n].Description, label(n)+"."), slices.Contains(req, n)); c != nil && !props[n].ReadOnly && snake(n, false) != "" {
				sub = append(sub, c)
			}
		}
		if len(sub) == 0 {
			return nil
		}
		p = append(p, kv{"type", "object"}, kv{"properties", sub})
	default:
		return nil
	}
	p = append(p, kv{"description", desc})
	if required {
		p = append(p, kv{"required", true})
	}
	return p
}

// label makes a quote line's label of a field name.
func label(n string) string {
	s := strings.ReplaceAll(snake(n, false), "_", " ")
	if s == "" {
		return n
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
