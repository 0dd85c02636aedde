package httpadapter

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// draftKind is an object kind found in a GET of one item.
type draftKind struct {
	name    string
	op      *oaOperation
	param   string // the path parameter that is the id
	schema  *oaSchema
	id      string // property names
	version string
	label   string
	// identity, identityName: the proposed business key (identityGuess).
	identity, identityName string
}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// findKinds makes an object kind of every GET whose path ends in one
// parameter (its other parameters fixed by a default or a single enum
// value) and whose answer is an object.
func (d *drafter) findKinds() {
	for _, op := range d.ops {
		if op.method != "GET" || !strings.HasSuffix(op.path, "}") {
			continue
		}
		s := op.success()
		if s == nil || s.typeName() != "object" {
			continue
		}
		params := pathParam.FindAllStringSubmatch(op.path, -1)
		idParam := params[len(params)-1][1]
		if !d.fixedParams(op, idParam) {
			continue
		}
		name := snake(s.RefName, true)
		if name == "" {
			name = singular(snake(lastLiteral(op.path), true))
		}
		if name == "" || len(name) > 40 || d.kinds[name] != nil {
			continue
		}
		props, _ := s.fields()
		k := &draftKind{name: name, op: op, param: idParam, schema: s,
			id:      firstOf(props, "id", "uuid", "key", snake(name, false)+"_id", idParam),
			version: firstOf(props, "version", "etag", "updated_at", "updated", "modified_at", "updatedAt", "modified"),
			label:   firstOf(props, "name", "title", "number", "email", "subject")}
		if k.id == "" {
			d.note("GET %s (%s): its answer has no id field; the draft names the object by /id, fix objects.%s.id.", op.path, op.name(), name)
			k.id = "id"
		}
		if k.version == "" {
			d.note("Objects of kind %s have no version field: a change made between the dry run and the write is not seen (see Preconditions in internal/httpadapter/README.md).", name)
		}
		var meta []string
		if m := props["metadata"]; m != nil {
			mp, _ := m.fields()
			meta = slices.Sorted(maps.Keys(mp))
		}
		if k.identity, k.identityName = identityGuess(name, slices.Sorted(maps.Keys(props)), "metadata", meta); k.identity != "" {
			d.note("%s", identityNote(name, k.identity, k.identityName))
		}
		d.kinds[name] = k
	}
}

// fixedParams says whether every path parameter other than the id has a
// default or a single enum value, as an object read by its id alone needs.
func (d *drafter) fixedParams(op *oaOperation, idParam string) bool {
	for _, p := range op.pathParams() {
		if p.Name != idParam && fixedValue(op, p.Name) == "{"+p.Name+"}" {
			d.note("GET %s (%s) is not an object kind: an object is read by its id alone, and {%s} has no default.", op.path, op.name(), p.Name)
			return false
		}
	}
	return true
}

// path writes an operation's path as a template: the kind's id parameter
// as idExpr, fixed parameters as their values, the others as args.
func (d *drafter) path(op *oaOperation, idParam, idExpr string) string {
	return pathParam.ReplaceAllStringFunc(op.path, func(m string) string {
		name := m[1 : len(m)-1]
		if name == idParam {
			return "{" + idExpr + "}"
		}
		if v := fixedValue(op, name); v != m {
			return v
		}
		return "{args." + snake(name, false) + "}"
	})
}

func (k *draftKind) spec() obj {
	o := obj{{"get", pathParam.ReplaceAllStringFunc(k.op.path, func(m string) string {
		if m[1:len(m)-1] == k.param {
			return "{id}"
		}
		return fixedValue(k.op, m[1:len(m)-1])
	})}, {"id", "/" + escapePointer(k.id)}}
	if k.version != "" {
		o = append(o, kv{"version", "/" + escapePointer(k.version)})
	}
	display := strings.ReplaceAll(k.name, "_", " ") + " {object." + k.id + "}"
	if k.label != "" && k.label != k.id {
		display = "{object." + k.label + "} (" + display + ")"
	}
	if !celName.MatchString(k.id) || (k.label != "" && !celName.MatchString(k.label)) {
		display = strings.ReplaceAll(k.name, "_", " ")
	}
	o = append(o, kv{"display", display})
	o = append(o, kv{"owner", closed("say whose it is, e.g. object.customer_id == account.id")})
	if k.identity != "" {
		o = append(o, kv{"identity", identitySpec(k.name, k.identity, k.identityName)})
	}
	return o
}

func fixedValue(op *oaOperation, name string) string {
	for _, p := range op.pathParams() {
		if p.Name == name && p.Schema != nil && p.Schema.Default != nil {
			return fmt.Sprint(p.Schema.Default)
		}
		if p.Name == name && p.Schema != nil && len(p.Schema.Enum) == 1 {
			return fmt.Sprint(p.Schema.Enum[0])
		}
	}
	return "{" + name + "}"
}

var celName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// readTools makes a read tool of every GET: of one object for a kind's
// GET, a plain path for the others; the fields are every field the
// answer's schema lists, for a person to cut down to what the assistant
// may see.
func (d *drafter) readTools() []any {
	var out []any
	names := map[string]bool{}
	for _, op := range d.ops {
		if op.method != "GET" {
			continue
		}
		s := op.success()
		if s == nil {
			d.note("GET %s (%s) answers no JSON schema: no read tool is drafted for it.", op.path, op.name())
			continue
		}
		name := snake(op.OperationID, false)
		if name == "" {
			name = "get_" + snake(op.path, false)
		}
		if names[name] || len(name) > 64 {
			continue
		}
		names[name] = true
		desc := strings.TrimRight(strings.TrimSpace(orDefault(op.Description, op.Summary)), ".")
		if desc == "" {
			desc = todo + "say what this answers and when the assistant should call it"
		}
		desc += ". " + todo + "remove from fields every field the assistant must not see (internal notes, scores, costs, other customers' data)."
		tool := obj{{"name", name}, {"title", orDefault(op.Summary, name)}, {"description", desc}}
		var kind *draftKind
		for _, k := range d.kinds {
			if k.op == op {
				kind = k
			}
		}
		if kind != nil {
			param := kind.name + "_id"
			tool = append(tool, kv{"params", []any{obj{{"name", param}, {"type", "string"}, {"required", true}, {"max_length", 200},
				{"description", "The " + strings.ReplaceAll(kind.name, "_", " ") + "'s id."}}}}, kv{"object", kind.name}, kv{"param", param})
			tool = append(tool, kv{"fields", leafPointers(s, "", 0)})
		} else {
			if p := customerParam(op); p != "" {
				d.note("GET %s (%s) is not drafted as a read tool: its {%s} names a customer or account, which the model could set to anyone's; read the customer's own account with \"account\": true (see Reading the principal's own account in internal/httpadapter/README.md).", op.path, op.name(), p)
				continue
			}
			var params []any
			for _, p := range op.pathParams() {
				if fixedValue(op, p.Name) == "{"+p.Name+"}" {
					params = append(params, paramOf(snake(p.Name, false), p.Schema, orDefault(p.Description, "The "+p.Name+"."), true))
				}
			}
			if params != nil {
				tool = append(tool, kv{"params", params})
			}
			tool = append(tool, kv{"path", d.path(op, "", "")})
			items, item := listIn(s)
			if items != "" || item != s {
				tool = append(tool, kv{"items", items})
			}
			tool = append(tool, kv{"fields", leafPointers(item, "", 0)})
		}
		if f := tool[len(tool)-1].v.([]string); len(f) == 0 || f[0] == "/" {
			d.note("GET %s (%s) answers no listed fields: no read tool is drafted for it.", op.path, op.name())
			continue
		}
		out = append(out, tool)
	}
	return out
}

// customerWords name a customer or an account in a path parameter.
var customerWords = regexp.MustCompile(`(?i)customer|account|user|member|client|owner|person|profile|tenant`)

// customerParam is the path parameter of op, not fixed, that names a
// customer or an account, by its name or the segment before it
// (/customers/{id}); "" when none does.
func customerParam(op *oaOperation) string {
	segs := strings.Split(strings.Trim(op.path, "/"), "/")
	for i, seg := range segs {
		m := pathParam.FindStringSubmatch(seg)
		if m == nil || fixedValue(op, m[1]) != "{"+m[1]+"}" {
			continue
		}
		if customerWords.MatchString(m[1]) || (i > 0 && customerWords.MatchString(segs[i-1])) {
			return m[1]
		}
	}
	return ""
}

// listIn finds the list in an answer: the answer itself, or its one array
// property of objects ("/data", "/items").
func listIn(s *oaSchema) (string, *oaSchema) {
	if s.typeName() == "array" && s.Items != nil {
		return "", s.Items
	}
	props, _ := s.fields()
	for _, n := range slices.Sorted(maps.Keys(props)) {
		if p := props[n]; p.typeName() == "array" && p.Items != nil && p.Items.typeName() == "object" {
			return "/" + escapePointer(n), p.Items
		}
	}
	return "", s
}

// leafPointers lists the JSON Pointers of a schema's fields, into objects
// and through arrays ("*") two levels down.
func leafPointers(s *oaSchema, prefix string, depth int) []string {
	props, _ := s.fields()
	if s.typeName() == "array" && s.Items != nil {
		return leafPointers(s.Items, prefix+"/*", depth)
	}
	if len(props) == 0 || depth > 2 {
		return []string{orDefault(prefix, "/")}
	}
	var out []string
	for _, n := range slices.Sorted(maps.Keys(props)) {
		p := props[n]
		if p.WriteOnly {
			continue
		}
		ptr := prefix + "/" + escapePointer(n)
		if t := p.typeName(); t == "object" || t == "array" {
			out = append(out, leafPointers(p, ptr, depth+1)...)
			continue
		}
		out = append(out, ptr)
	}
	return out
}

func firstOf(props map[string]*oaSchema, names ...string) string {
	for _, n := range names {
		if _, ok := props[n]; ok {
			return n
		}
	}
	return ""
}

func lastLiteral(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i := len(segs) - 1; i >= 0; i-- {
		if !strings.HasPrefix(segs[i], "{") {
			return segs[i]
		}
	}
	return ""
}

func singular(s string) string {
	switch {
	case strings.HasSuffix(s, "ies"):
		return s[:len(s)-3] + "y"
	case strings.HasSuffix(s, "sses"), strings.HasSuffix(s, "xes"):
		return s[:len(s)-2]
	case strings.HasSuffix(s, "s") && !strings.HasSuffix(s, "ss"):
		return s[:len(s)-1]
	}
	return s
}
