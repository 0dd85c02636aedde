package httpadapter

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// A system that speaks GraphQL ("protocol": "graphql") is described like
// any other, except that where a read gives a path or a write a method,
// path and body, it gives a GraphQLDesc: the operation is POSTed to the
// file's endpoint as {query, variables}, and the answer the rest of the
// file reads (items, fields, result, verify) is the value at Data under
// the answer's "data". Everything else (auth, the idempotency header, the
// error rules, the request ledger) is the same as over plain HTTP.

// GraphQLDesc is one GraphQL operation of a description file.
type GraphQLDesc struct {
	// Query is the GraphQL document: exactly one operation, a query for a
	// read and a mutation for a write, with fragments if need be.
	Query string `json:"query"`
	// Variables gives each variable the operation declares a CEL
	// expression of its value, over what is bound where the operation
	// runs (as a path's placeholders).
	Variables map[string]string `json:"variables"`
	// Data is where the answer is under "data", dotted
	// ("refundCreate.refund"); "" is "data" itself.
	Data string `json:"data"`
	// UserErrors, for a mutation, is where its payload's user errors are
	// ("refundCreate.userErrors"): a non-empty list there is a refusal.
	UserErrors string `json:"user_errors"`
}

// defaultEndpoint is where a graphql file's operations go unless it says.
const defaultEndpoint = "/graphql"

// graphqlOp is a compiled GraphQLDesc: the request body with its
// variables as one-placeholder templates (so that the checks of what is
// sent and of the key see them as a body's), and where the answer is.
type graphqlOp struct {
	name       string
	mutation   bool
	body       map[string]any
	data       []string
	userErrors []string
	// cursor is the variable a page's cursor goes in, for a paged list.
	cursor string
	ptr    string
}

// graphql compiles the operation at ptr; nil gives nil. write says it is
// an action's request (a mutation) rather than a read (a query); params,
// when not nil, are the parameters its variables are typed against.
func (c *compiler) graphql(ptr string, d *GraphQLDesc, write bool, params []ParamDesc) *graphqlOp {
	if d == nil {
		return nil
	}
	if !c.graphqlFile && !c.graphqlRefused {
		// Said once, at the first operation; the rest compile as if the
		// protocol were given, so the one fix is the one error.
		c.graphqlRefused = true
		c.fail(ptr, "a graphql operation in a file whose protocol is not graphql",
			`add "protocol": "graphql" (and "endpoint" when it is not /graphql), or give a path instead`)
	}
	op := &graphqlOp{ptr: ptr, data: dotted(d.Data), userErrors: dotted(d.UserErrors)}
	doc, err := parser.ParseQuery(&ast.Source{Name: ptr, Input: d.Query})
	if err != nil {
		c.fail(ptr+"/query", "the GraphQL document does not parse: "+oneLine(err.Error()),
			`write one operation, e.g. "query Order($id: ID!) { order(id: $id) { id } }"`)
		return nil
	}
	if len(doc.Operations) != 1 {
		c.fail(ptr+"/query", fmt.Sprintf("the GraphQL document holds %d operations; it must hold exactly one", len(doc.Operations)),
			"keep one operation per read or write (fragments may stay)")
		return nil
	}
	def := doc.Operations[0]
	op.name, op.mutation = def.Name, def.Operation == ast.Mutation
	switch {
	case write && def.Operation != ast.Mutation:
		c.fail(ptr+"/query", fmt.Sprintf("an action's request must be a mutation, and this is a %s", def.Operation),
			`write "mutation Name($input: …) { … }"; a query changes nothing`)
	case !write && def.Operation != ast.Query:
		c.fail(ptr+"/query", fmt.Sprintf("a read must be a query, and this is a %s", def.Operation),
			`write "query Name(…) { … }": a read must never change the system`)
	}
	if d.UserErrors != "" && !write {
		c.fail(ptr+"/user_errors", "user_errors applies to a mutation's payload", "remove it from the read")
	}
	vars := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(d.Variables)) {
		vp := ptr + "/variables/" + escapePointer(name)
		vd := def.VariableDefinitions.ForName(name)
		if vd == nil {
			c.fail(vp, fmt.Sprintf("the operation declares no variable $%s", name),
				"declare it in the operation's variables, e.g. ($"+name+": String!), or remove it")
			continue
		}
		e := c.expr(vp, d.Variables[name])
		if e == nil {
			continue
		}
		vars[name] = &template{src: e.src, ptr: vp, parts: []templatePart{{expr: e}}}
		if params != nil {
			c.graphqlVarType(vp, vd, e, params)
		}
	}
	for _, vd := range def.VariableDefinitions {
		if _, given := d.Variables[vd.Variable]; !given && vd.Type.NonNull && vd.DefaultValue == nil {
			c.fail(ptr+"/variables", fmt.Sprintf("the operation's variable $%s (%s) is required and given no value", vd.Variable, vd.Type),
				fmt.Sprintf(`add "%s": a CEL expression of its value`, vd.Variable))
		}
	}
	op.body = map[string]any{"query": d.Query, "variables": vars}
	if op.name != "" {
		op.body["operationName"] = op.name
	}
	return op
}

// graphqlVarType checks a variable whose value is an argument as it is
// (args.amount_cents) against the argument's declared type: a GraphQL
// type that could not hold it fails at load rather than on every call,
// and a required variable needs a required argument.
func (c *compiler) graphqlVarType(ptr string, vd *ast.VariableDefinition, e *expr, params []ParamDesc) {
	path, ok := chain(e.tree)
	if !ok || len(path) < 2 || path[0] != "args" {
		return
	}
	p := paramAt(params, path[1:])
	if p == nil {
		return // checkNames names the unknown argument
	}
	t := vd.Type
	if t.NonNull && !p.Required {
		c.fail(ptr, fmt.Sprintf("$%s is %s (required), and args.%s is optional", vd.Variable, t, strings.Join(path[1:], ".")),
			fmt.Sprintf(`make the parameter required, declare $%s without "!", or give a default in the expression (args.?%s.orValue(…))`,
				vd.Variable, strings.Join(path[1:], ".")))
	}
	if t.Elem != nil {
		c.fail(ptr, fmt.Sprintf("$%s is a list (%s), and args.%s is a single %s", vd.Variable, t, strings.Join(path[1:], "."), p.Type),
			"declare the variable with the argument's type, or build the list in the expression")
		return
	}
	named := t.NamedType
	var fits bool
	switch p.Type {
	case "integer":
		fits = named != "String" && named != "ID" && named != "Boolean"
	case "string":
		fits = named != "Int" && named != "Float" && named != "Boolean"
	case "object":
		fits = !slices.Contains([]string{"String", "ID", "Int", "Float", "Boolean"}, named)
	default:
		fits = true
	}
	if !fits {
		c.fail(ptr, fmt.Sprintf("$%s is %s, and args.%s is a%s %s", vd.Variable, t, strings.Join(path[1:], "."), article(p.Type), p.Type),
			fmt.Sprintf("declare $%s with a GraphQL type that holds a%s %s (%s), or convert it in the expression",
				vd.Variable, article(p.Type), p.Type, graphqlTypeFor(p.Type)))
	}
}

func article(s string) string {
	if strings.ContainsRune("aeiou", rune(s[0])) {
		return "n"
	}
	return ""
}

func graphqlTypeFor(paramType string) string {
	switch paramType {
	case "integer":
		return "Int"
	case "string":
		return "String or ID"
	}
	return "an input type"
}

// paramAt finds the parameter a path of names reaches (address.city).
func paramAt(ps []ParamDesc, path []string) *ParamDesc {
	for i := range ps {
		if ps[i].Name != path[0] {
			continue
		}
		if len(path) == 1 {
			return &ps[i]
		}
		return paramAt(ps[i].Properties, path[1:])
	}
	return nil
}

// dotted splits "refundCreate.refund"; "" is nil.
func dotted(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// graphqlPaging checks a GraphQL list's paging: only a cursor fits, sent
// in a variable the operation declares and the file does not set.
func (c *compiler) graphqlPaging(ptr string, op *graphqlOp, p *paging, d *GraphQLDesc) {
	if op == nil || p == nil {
		return
	}
	if p.pageParam != "" || p.link {
		c.fail(ptr, "a GraphQL list pages by cursor only", `write {"has_more": "/pageInfo/hasNextPage", "next": "/pageInfo/endCursor", "param": "after"}`)
		return
	}
	if p.param == "" {
		return
	}
	op.cursor = p.param
	doc, _ := parser.ParseQuery(&ast.Source{Input: d.Query})
	if doc == nil || len(doc.Operations) != 1 {
		return
	}
	vd := doc.Operations[0].VariableDefinitions.ForName(p.param)
	switch {
	case vd == nil:
		c.fail(ptr+"/param", fmt.Sprintf("the operation declares no variable $%s for the cursor", p.param),
			fmt.Sprintf("declare ($%s: String) in the query and pass it to the list's after argument", p.param))
	case vd.Type.NonNull:
		c.fail(ptr+"/param", fmt.Sprintf("$%s is %s, and the first page has no cursor", p.param, vd.Type),
			fmt.Sprintf("declare $%s without \"!\"", p.param))
	}
	if _, set := d.Variables[p.param]; set {
		c.fail(ptr+"/param", fmt.Sprintf("the file sets $%s, which the adapter sets to each page's cursor", p.param),
			fmt.Sprintf("remove %s from variables", p.param))
	}
}

// graphqlEndpoint reads the file's protocol and, for graphql, where its
// operations go.
func (c *compiler) graphqlEndpoint(d *Description) string {
	if d.Protocol != "graphql" {
		if d.Endpoint != "" {
			c.fail("/endpoint", "an endpoint applies to a graphql file", `add "protocol": "graphql", or remove endpoint`)
		}
		return ""
	}
	c.graphqlFile = true
	endpoint := d.Endpoint
	if endpoint == "" {
		endpoint = defaultEndpoint
	}
	c.endpoint = &template{src: endpoint, ptr: "/endpoint", parts: []templatePart{{text: endpoint}}}
	return endpoint
}

// graphqlObject compiles an object's GraphQL get and list.
func (c *compiler) graphqlObject(ptr string, o ObjectSpec, obj *object) {
	if o.Get != "" && o.GetGraphQL != nil {
		c.fail(ptr+"/get_graphql", "an object is read by get or by get_graphql, not both", "keep one")
	}
	if o.List != "" && o.ListGraphQL != nil {
		c.fail(ptr+"/list_graphql", "an object is listed by list or by list_graphql, not both", "keep one")
	}
	obj.getGQL = c.graphql(ptr+"/get_graphql", o.GetGraphQL, false, nil)
	obj.listGQL = c.graphql(ptr+"/list_graphql", o.ListGraphQL, false, nil)
	c.graphqlPaging(ptr+"/paging", obj.listGQL, obj.paging, o.ListGraphQL)
}

// listed says whether the object has a list, a path's or a query's.
func (o *object) listed() bool { return o.list != nil || o.listGQL != nil }

// graphqlRequest compiles an action's request (a mutation) or dry run (a
// query) given as a GraphQL operation: a POST of its body to the endpoint.
func (c *compiler) graphqlRequest(ptr string, r RequestDesc) *request {
	var params []ParamDesc
	if c.scope != nil {
		params = c.scope.params
	}
	op := c.graphql(ptr+"/graphql", r.GraphQL, strings.HasSuffix(ptr, "/request"), params)
	if op == nil {
		return &request{method: "POST", path: c.path(ptr+"/path", ""), body: map[string]any{}}
	}
	return &request{method: "POST", path: c.endpoint, body: op.body, hasBody: true, gql: op}
}

// graphqlUses says whether an operation's variables read name.
func graphqlUses(op *graphqlOp, name string) bool {
	if op == nil {
		return false
	}
	for _, t := range bodyTemplates(op.body) {
		if templateUses(t, name) {
			return true
		}
	}
	return false
}

// graphqlPrecondition refuses a precondition on a GraphQL mutation: its
// refusal is matched by HTTP status, and a mutation's is in its answer.
func (c *compiler) graphqlPrecondition(ptr string, act *action) {
	if act.request != nil && act.request.gql != nil {
		c.fail(ptr, "a precondition is not carried by a GraphQL mutation",
			"pass the version in the mutation's variables (e.g. \"expectedVersion\": \"target.version\") and map the system's refusal in errors.rules by its code")
	}
}
