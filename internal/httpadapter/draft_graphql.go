package httpadapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// DraftFromGraphQL writes a description file of a GraphQL system from its
// schema, as SDL or as the JSON answer of an introspection query: the
// protocol and endpoint, bearer auth from <NAME>_TOKEN, an object kind for
// every query field that reads one object by its id, a read tool for
// every other query field (connections paged by cursor) and a write action
// for each mutation opts.Write names. It loads closed, like a draft from
// OpenAPI: the principal lookup and every owner hold of nothing, and what
// only a person can say is a TODO string.
func DraftFromGraphQL(raw []byte, opts DraftOptions) (*Draft, error) {
	schema, err := loadGraphQLSchema(raw)
	if err != nil {
		return nil, err
	}
	if schema.Query == nil {
		return nil, errors.New("the schema has no query type, so nothing can be read (fix: give the schema a Query type)")
	}
	d := &gqlDrafter{schema: schema, name: orDefault(opts.Name, "graphql"), kinds: map[string]*gqlKind{}}
	d.envPrefix = strings.ToUpper(strings.ReplaceAll(d.name, "-", "_"))
	if len(opts.Write) == 0 {
		return nil, fmt.Errorf("choose the mutations with -write: a description needs at least one action (fix: -write %s)",
			strings.Join(d.mutations(), ","))
	}
	d.findKinds()
	if len(d.kinds) == 0 {
		return nil, errors.New("no query field reads one object by its id (order(id: ID!): Order), so the draft has no object for an action to act on (fix: write \"objects\" by hand)")
	}
	var actions []any
	var errs []error
	for _, m := range opts.Write {
		a, err := d.action(strings.TrimSpace(m))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		actions = append(actions, a)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	urlEnv, tokenEnv := d.envPrefix+"_URL", d.envPrefix+"_TOKEN"
	file := obj{{"name", d.name}, {"title", d.name}, {"base_url_env", urlEnv}, {"protocol", "graphql"}, {"endpoint", defaultEndpoint},
		{"auth", obj{{"type", "bearer"}, {"secret_env", tokenEnv}}}, {"idempotency", d.idempotency}}
	d.note("the endpoint is %s and auth a bearer token from %s: change them if the system differs", defaultEndpoint, tokenEnv)
	file = append(file, kv{"principal", obj{
		{"graphql", obj{{"query", "query Principal($email: String!) { TODO_customers(email: $email) { id email } }"},
			{"variables", obj{{"email", "principal"}}}, {"data", "TODO_customers"}}},
		{"match", closed("say how the principal (the customer's e-mail) is matched, e.g. account.email.lowerAscii() == principal")}}})
	objects := obj{}
	for _, k := range slices.Sorted(maps.Keys(d.kinds)) {
		objects = append(objects, kv{k, d.kinds[k].spec()})
	}
	file = append(file, kv{"objects", objects}, kv{"read_tools", d.readTools()}, kv{"actions", actions},
		kv{"errors", obj{{"code", "/errors/0/extensions/code"}, {"rules", []any{obj{{"status", []any{"4xx"}}, {"code", "system_refused"},
			{"outcome", "refused"}, {"message", d.name + " refused the request; nothing was changed."},
			{"hint", todo + "say what the assistant can do instead."}}}}}})
	out, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return nil, err
	}
	return &Draft{File: append(out, '\n'), Env: []string{tokenEnv, urlEnv}, Notes: d.notes}, nil
}

// loadGraphQLSchema reads SDL, or an introspection answer turned to SDL.
func loadGraphQLSchema(raw []byte) (*ast.Schema, error) {
	sdl := string(raw)
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' {
		s, err := introspectionSDL(t)
		if err != nil {
			return nil, err
		}
		sdl = s
	}
	schema, err := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphql", Input: sdl})
	if err != nil {
		return nil, fmt.Errorf("not a GraphQL schema: %w (fix: give the SDL, or the JSON answer of an introspection query)", err)
	}
	return schema, nil
}

type gqlDrafter struct {
	schema      *ast.Schema
	name        string
	envPrefix   string
	kinds       map[string]*gqlKind
	idempotency obj
	notes       []string
}

func (d *gqlDrafter) note(format string, a ...any) {
	d.notes = append(d.notes, fmt.Sprintf(format, a...))
}

// gqlKind is an object kind: a query field that reads one by its id.
type gqlKind struct {
	name  string
	field *ast.FieldDefinition
	arg   *ast.ArgumentDefinition
	typ   *ast.Definition
	query string
	// identity, identityName: the proposed business key (identityGuess).
	identity, identityName string
}

func (k *gqlKind) spec() obj {
	id := "/id"
	if k.typ.Fields.ForName("id") == nil {
		id = "/TODO-id"
	}
	o := obj{
		{"get_graphql", obj{{"query", k.query}, {"variables", obj{{"id", "id"}}}, {"data", k.field.Name}}},
		{"id", id},
	}
	for _, v := range []string{"version", "updatedAt"} {
		if k.typ.Fields.ForName(v) != nil {
			o = append(o, kv{"version", "/" + v})
			break
		}
	}
	o = append(o, obj{
		{"owner", closed("say whose " + k.name + " it is, e.g. object.customerId == account.id")},
		{"display", todo + "name the " + strings.ReplaceAll(k.name, "_", " ") + " for a person, e.g. " + k.typ.Name + " {object.id}"},
	}...)
	if k.identity != "" {
		o = append(o, kv{"identity", identitySpec(k.name, k.identity, k.identityName)})
	}
	return o
}

func (d *gqlDrafter) mutations() []string {
	if d.schema.Mutation == nil {
		return []string{"MUTATION"}
	}
	var out []string
	for _, f := range d.schema.Mutation.Fields {
		if !strings.HasPrefix(f.Name, "__") {
			out = append(out, f.Name)
		}
	}
	return out
}

// selection is the scalar (and enum) fields of a type, for a query.
func (d *gqlDrafter) selection(t *ast.Definition) []string {
	var out []string
	for _, f := range t.Fields {
		if def := d.schema.Types[f.Type.Name()]; def != nil && (def.Kind == ast.Scalar || def.Kind == ast.Enum) && len(f.Arguments) == 0 {
			out = append(out, f.Name)
		}
	}
	return out
}

// findKinds makes an object kind of every query field answering one
// object and taking one required id argument.
func (d *gqlDrafter) findKinds() {
	for _, f := range d.schema.Query.Fields {
		t := d.schema.Types[f.Type.Name()]
		if t == nil || t.Kind != ast.Object || f.Type.Elem != nil || len(f.Arguments) != 1 || strings.HasPrefix(f.Name, "__") {
			continue
		}
		a := f.Arguments[0]
		if !a.Type.NonNull || (a.Type.Name() != "ID" && a.Type.Name() != "String") {
			continue
		}
		name := snake(t.Name, true)
		if _, seen := d.kinds[name]; seen || name == "" {
			continue
		}
		k := &gqlKind{name: name, field: f, arg: a, typ: t}
		sel := d.selection(t)
		k.identity, k.identityName = d.identity(k)
		if path := strings.Split(k.identity, "."); len(path) == 2 {
			sel = append(sel, path[0]+" { "+path[1]+" }") // the key in its metadata
		}
		if k.identity != "" {
			d.note("%s", identityNote(name, k.identity, k.identityName))
		}
		k.query = fmt.Sprintf("query %s($id: %s) { %s(%s: $id) { %s } }", t.Name, a.Type, f.Name, a.Name, strings.Join(sel, " "))
		d.kinds[name] = k
	}
}

// identity proposes a kind's business key from its scalar fields and
// those of its metadata object (identityGuess).
func (d *gqlDrafter) identity(k *gqlKind) (path, name string) {
	var meta []string
	if mf := k.typ.Fields.ForName("metadata"); mf != nil && mf.Type.Elem == nil {
		if mt := d.schema.Types[mf.Type.Name()]; mt != nil && mt.Kind == ast.Object {
			meta = d.selection(mt)
		}
	}
	return identityGuess(k.name, d.selection(k.typ), "metadata", meta)
}

// accountArg finds an argument that names a customer or account: such a
// field would let the model read another customer's data.
var accountArg = regexp.MustCompile(`(?i)^((customer|account|user)(_?id)?|e?mail|email_?address)$`)

// readTools drafts a read tool for every query field: an object tool for
// an object kind's field, a graphql tool for the others with their
// required scalar arguments as parameters.
func (d *gqlDrafter) readTools() []any {
	var out []any
	for _, f := range d.schema.Query.Fields {
		if strings.HasPrefix(f.Name, "__") {
			continue
		}
		if k := d.kindOf(f); k != nil {
			out = append(out, obj{{"name", "get_" + k.name}, {"title", "Get a" + article(k.name) + " " + strings.ReplaceAll(k.name, "_", " ")},
				{"description", orDefault(strings.TrimSpace(f.Description), todo+"say what the assistant learns from it.")},
				{"params", []any{obj{{"name", k.name + "_id"}, {"type", "string"}, {"required", true}, {"max_length", 200},
					{"description", "The " + strings.ReplaceAll(k.name, "_", " ") + "'s id."}}}},
				{"object", k.name}, {"param", k.name + "_id"}, {"fields", pointers(d.selection(k.typ))}})
			continue
		}
		if tool := d.queryTool(f); tool != nil {
			out = append(out, tool)
		}
	}
	return out
}

func (d *gqlDrafter) kindOf(f *ast.FieldDefinition) *gqlKind {
	for _, k := range d.kinds {
		if k.field == f {
			return k
		}
	}
	return nil
}

func pointers(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "/" + n
	}
	return out
}

// queryTool drafts a graphql read tool of a list, a connection (nodes
// and pageInfo, paged by after) or an object; nil when it takes a
// customer or an argument the draft cannot make a parameter of.
func (d *gqlDrafter) queryTool(f *ast.FieldDefinition) obj {
	t := d.schema.Types[f.Type.Name()]
	if t == nil || (t.Kind != ast.Object) {
		d.note("query %s answers no object, so it has no read tool", f.Name)
		return nil
	}
	var decls, args []string
	var params []any
	vars := obj{}
	paged := false
	for _, a := range f.Arguments {
		if accountArg.MatchString(a.Name) {
			d.note("query %s takes %s from the model and is left out: read the customer's own with a tool of the principal's account", f.Name, a.Name)
			return nil
		}
		if a.Name == "after" && a.Type.Name() == "String" && !a.Type.NonNull {
			paged = true
			decls, args = append(decls, "$after: String"), append(args, "after: $after")
			continue
		}
		if !a.Type.NonNull {
			continue // optional: left to its default
		}
		pt := paramType(d.schema.Types[a.Type.Name()])
		if pt == "" || a.Type.Elem != nil {
			d.note("query %s takes %s (%s), which the draft cannot make a parameter of, and is left out", f.Name, a.Name, a.Type)
			return nil
		}
		pn := snake(a.Name, false)
		p := obj{{"name", pn}, {"type", pt}, {"required", true}, {"description", orDefault(strings.TrimSpace(a.Description), "The "+a.Name+".")}}
		if pt == "string" {
			p = append(p, kv{"max_length", 200})
		}
		params = append(params, p)
		decls, args = append(decls, "$"+a.Name+": "+a.Type.String()), append(args, a.Name+": $"+a.Name)
		vars = append(vars, kv{a.Name, "args." + pn})
	}
	elem, items := t, ""
	nodes := t.Fields.ForName("nodes")
	if nodes != nil && nodes.Type.Elem != nil && t.Fields.ForName("pageInfo") != nil {
		elem, items = d.schema.Types[nodes.Type.Name()], "/nodes"
	} else if f.Type.Elem == nil {
		paged = false
	}
	if elem == nil {
		return nil
	}
	sel := strings.Join(d.selection(elem), " ")
	if items != "" {
		sel = "nodes { " + sel + " }"
		if paged {
			sel += " pageInfo { hasNextPage endCursor }"
		}
	}
	call := f.Name
	if len(args) > 0 {
		call += "(" + strings.Join(args, ", ") + ")"
	}
	head := "query " + upperFirst(f.Name)
	if len(decls) > 0 {
		head += "(" + strings.Join(decls, ", ") + ")"
	}
	tool := obj{{"name", snake(f.Name, false)}, {"title", label(f.Name)},
		{"description", orDefault(strings.TrimSpace(f.Description), todo+"say what the assistant learns from it.")}}
	if len(params) > 0 {
		tool = append(tool, kv{"params", params})
	}
	q := obj{{"query", head + " { " + call + " { " + sel + " } }"}}
	if len(vars) > 0 {
		q = append(q, kv{"variables", vars})
	}
	tool = append(tool, kv{"graphql", append(q, kv{"data", f.Name})})
	if items != "" {
		tool = append(tool, kv{"items", items})
	}
	tool = append(tool, kv{"fields", pointers(d.selection(elem))})
	if items != "" && paged {
		tool = append(tool, kv{"paging", obj{{"has_more", "/pageInfo/hasNextPage"}, {"next", "/pageInfo/endCursor"}, {"param", "after"}}})
	}
	return tool
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// paramType is the description-file type of a GraphQL input type; "" for
// one the draft does not make a parameter of (lists, nested input).
func paramType(t *ast.Definition) string {
	if t == nil {
		return ""
	}
	switch {
	case t.Name == "Int":
		return "integer"
	case t.Name == "Float" || t.Name == "Boolean" || t.Kind == ast.InputObject:
		return ""
	}
	return "string" // String, ID, an enum, a custom scalar
}
