package httpadapter

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"cel.dev/cel-go/cel"

	"countersign/internal/adapter"
)

// compiler turns a Description into an Adapter, collecting every problem
// with its line.
type compiler struct {
	file string
	pos  positions
	env  *cel.Env
	errs []error
	// scope, when set, is what the expressions being compiled may name
	// (check.go).
	scope *exprScope
	// defaultLocale is the file's default locale and locales every locale
	// a quote text is written in (locale.go).
	defaultLocale string
	locales       map[string]bool
	// graphql says the file's protocol is graphql, and endpoint is where
	// its operations go (graphql.go).
	graphqlFile bool
	endpoint    *template
	// graphqlRefused says an operation without the protocol was reported.
	graphqlRefused bool
	// fileEncoding and fileFormStyle are the file's body_encoding and
	// form_style, which a request may override (form.go).
	fileEncoding, fileFormStyle string
}

func (c *compiler) fail(ptr, problem, fix string) {
	c.errs = append(c.errs, &FileError{File: c.file, Line: c.pos.line(ptr), Pointer: ptr, Problem: problem, Fix: fix})
}

// expr compiles a CEL expression written at ptr; "" gives nil.
func (c *compiler) expr(ptr, src string) *expr {
	if src == "" {
		return nil
	}
	ast, iss := c.env.Compile(src)
	if iss != nil && iss.Err() != nil {
		c.fail(ptr, "the CEL expression does not compile: "+oneLine(iss.Err().Error()),
			"write a CEL expression over "+strings.Join(celVariables, ", ")+" (see https://cel.dev)")
		return nil
	}
	prg, err := c.env.Program(ast)
	if err != nil {
		c.fail(ptr, "the CEL expression cannot run: "+oneLine(err.Error()), "")
		return nil
	}
	e := &expr{src: src, at: fmt.Sprintf("%s:%d", c.file, c.pos.line(ptr)), ptr: ptr, prg: prg, tree: ast.NativeRep().Expr()}
	if c.scope != nil {
		e.owner = c.scope.owner
	}
	c.checkNames(ptr, src, e)
	return e
}

// template compiles text with {expression} placeholders written at ptr.
func (c *compiler) template(ptr, src string) *template {
	parts, isExpr, err := splitTemplate(src)
	if err != nil {
		c.fail(ptr, err.Error(), "close every { with }; a placeholder holds one CEL expression")
		return &template{src: src, ptr: ptr}
	}
	t := &template{src: src, ptr: ptr}
	for i, p := range parts {
		if !isExpr[i] {
			t.parts = append(t.parts, templatePart{text: p})
			continue
		}
		e := c.expr(ptr, p)
		if e == nil {
			return &template{src: src, ptr: ptr}
		}
		t.parts = append(t.parts, templatePart{expr: e})
	}
	return t
}

// body compiles a JSON body whose strings are templates.
func (c *compiler) body(ptr string, v any) any {
	switch x := v.(type) {
	case string:
		return c.template(ptr, x)
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			out[k] = c.body(ptr+"/"+escapePointer(k), val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = c.body(ptr+"/"+strconv.Itoa(i), val)
		}
		return out
	}
	return v
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func build(file string, pos positions, d *Description, cfg Config) (*Adapter, error) {
	env, err := newEnv()
	if err != nil {
		return nil, fmt.Errorf("httpadapter: CEL environment: %w", err)
	}
	c := &compiler{file: file, pos: pos, env: env, fileEncoding: d.BodyEncoding, fileFormStyle: d.FormStyle}
	c.defaultLocale = c.fileLocale(d)
	c.locales = map[string]bool{c.defaultLocale: true}
	cfg = cfg.withDefaults()
	a := &Adapter{name: d.Name, title: d.Title, file: file, http: cfg.HTTPClient, ledger: cfg.Ledger, clock: cfg.Now,
		log: cfg.Logger, idemHeader: d.IdempotencyHeader, objects: map[string]*object{}}

	c.idempotency(a, d)
	c.fileForm(d)
	a.base = d.BaseURL
	if d.BaseURLEnv != "" {
		a.base = cfg.Getenv(d.BaseURLEnv)
		if a.base == "" {
			c.fail("/base_url_env", fmt.Sprintf("the environment variable %s is not set", d.BaseURLEnv),
				fmt.Sprintf("set %s to the system's base URL before starting", d.BaseURLEnv))
		} else if !strings.HasPrefix(a.base, "http://") && !strings.HasPrefix(a.base, "https://") {
			c.fail("/base_url_env", fmt.Sprintf("the environment variable %s is not an http:// or https:// URL", d.BaseURLEnv), "")
		}
	}
	a.base = strings.TrimRight(a.base, "/")
	a.auth = c.auth(d.Auth, cfg, d.Name, a.base)
	a.endpoint = c.graphqlEndpoint(d)

	if d.Principal.Path != "" || d.Principal.GraphQL != nil {
		a.principal = &principalLookup{path: c.path("/principal/path", d.Principal.Path), items: d.Principal.Items,
			match: c.expr("/principal/match", d.Principal.Match), contact: d.Principal.Contact,
			gql: c.graphql("/principal/graphql", d.Principal.GraphQL, false, nil)}
	}
	for kind, o := range d.Objects {
		ptr := "/objects/" + escapePointer(kind)
		obj := &object{kind: kind, get: c.path(ptr+"/get", o.Get), items: o.Items, idPtr: o.ID, versionPtr: o.Version,
			display: c.template(ptr+"/display", o.Display), owner: c.expr(ptr+"/owner", o.Owner),
			terms: c.expr(ptr+"/terms", o.Terms), exact: c.expr(ptr+"/exact", o.Exact)}
		if o.List != "" {
			obj.list = c.path(ptr+"/list", o.List)
		}
		obj.paging = c.paging(ptr+"/paging", o.Paging)
		c.graphqlObject(ptr, o, obj)
		if o.Identity != nil {
			obj.identityName, obj.identity = o.Identity.Name, c.expr(ptr+"/identity/value", o.Identity.Value)
		}
		if o.Paging != nil && !obj.listed() {
			c.fail(ptr+"/paging", "paging applies to the list, and objects."+kind+" has none", `add "list", or remove paging`)
		}
		if o.IDPattern != "" {
			obj.idPattern, err = regexp.Compile(o.IDPattern)
			if err != nil {
				c.fail(ptr+"/id_pattern", "not a regular expression: "+err.Error(), "")
			}
		}
		if o.Owner != "" && a.principal == nil {
			c.fail(ptr+"/owner", "objects with an owner need the principal lookup", "add \"principal\" saying how a customer's e-mail maps to their account")
		}
		if obj.listed() && o.Terms == "" {
			c.fail(ptr+"/terms", "a listed object needs terms to match a reference in words", "add \"terms\": a CEL list of the words that describe the object")
		}
		a.objects[kind] = obj
	}
	kinds := func() string {
		var ks []string
		for k := range d.Objects {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return strings.Join(ks, ", ")
	}
	for i, r := range d.ReadTools {
		ptr := fmt.Sprintf("/read_tools/%d", i)
		rt := &readTool{spec: adapter.ReadToolSpec{Name: r.Name, Title: r.Title, Description: r.Description, Params: params(r.Params)},
			param: r.Param, items: r.Items, fields: r.Fields, max: r.MaxItems, account: r.Account, paging: c.paging(ptr+"/paging", r.Paging)}
		if rt.max == 0 {
			rt.max = 20
		}
		c.scope = &exprScope{owner: "read tool " + r.Name, params: r.Params, argsBound: true}
		c.verbName(ptr+"/name", r.Name)
		switch {
		case r.Object != "":
			rt.object = a.objects[r.Object]
			if rt.object == nil {
				c.fail(ptr+"/object", fmt.Sprintf("no object kind %q", r.Object), "use one of: "+kinds())
			}
			if !slices.ContainsFunc(r.Params, func(p ParamDesc) bool { return p.Name == r.Param }) {
				c.fail(ptr+"/param", fmt.Sprintf("no parameter %q", r.Param), "declare it under params")
			}
		case r.List != "":
			rt.list = a.objects[r.List]
			if rt.list == nil || !rt.list.listed() {
				c.fail(ptr+"/list", fmt.Sprintf("no listed object kind %q", r.List), "use an object with \"list\": "+kinds())
			}
		case r.Account:
			c.accountTool(ptr, r, rt, a.principal != nil)
		case r.GraphQL != nil:
			rt.gql = c.graphql(ptr+"/graphql", r.GraphQL, false, r.Params)
			c.graphqlPaging(ptr+"/paging", rt.gql, rt.paging, r.GraphQL)
			if graphqlUses(rt.gql, "account") && a.principal == nil {
				c.fail(ptr+"/graphql/variables", "the variables use account, but the file has no principal lookup",
					`add "principal" saying how a customer's e-mail maps to their account`)
			}
		default:
			rt.path = c.path(ptr+"/path", r.Path)
			if templateUses(rt.path, "account") && a.principal == nil {
				c.fail(ptr+"/path", "the path uses account, but the file has no principal lookup", `add "principal" saying how a customer's e-mail maps to their account`)
			}
		}
		if r.Paging != nil && r.Path == "" && r.GraphQL == nil {
			c.fail(ptr+"/paging", "paging applies to a path's list; an object's list pages as its objects entry says", `move paging to objects.<kind>, or remove it`)
		} else if r.Paging != nil && r.Items == "" {
			c.fail(ptr+"/paging", "paging needs items: without it the answer is read as one page, and the paging would be ignored",
				`add "items": the JSON Pointer of each page's list, e.g. "/items"`)
		}
		markReadPaths(rt)
		a.reads = append(a.reads, rt)
		c.scope = nil
	}
	for i, ad := range d.Actions {
		c.verbName(fmt.Sprintf("/actions/%d/name", i), ad.Name)
		act := c.action(fmt.Sprintf("/actions/%d", i), ad, a.objects, kinds)
		markActionPaths(act)
		c.carriesKey(fmt.Sprintf("/actions/%d/request", i), act, d, a.idemField)
		c.formCarriesKey(fmt.Sprintf("/actions/%d", i), act, a.idemField)
		if act.pre != nil && act.pre.bodyField != "" && a.idemField != "" && pointersOverlap(act.pre.bodyField, a.idemField) {
			c.fail(fmt.Sprintf("/actions/%d/precondition/body_field", i),
				fmt.Sprintf("the version would go where the idempotency key goes (%s and %s)", act.pre.bodyField, a.idemField),
				"put the version and the key in different body fields")
		}
		a.actions = append(a.actions, act)
	}
	a.errs = c.errorMapping(d.Errors)
	c.customerBrand(a, d)
	a.defaultLocale, a.locales = c.defaultLocale, slices.Sorted(maps.Keys(c.locales))
	if d.Effects != nil {
		a.effects = &effectsLookup{path: c.path("/effects/path", d.Effects.Path), items: d.Effects.Items,
			id: d.Effects.ID, at: d.Effects.At, kind: d.Effects.Kind, object: d.Effects.Object,
			gql: c.graphql("/effects/graphql", d.Effects.GraphQL, false, nil)}
		c.authoritative(a.effects, d.Effects)
		c.effectsAmount(a.effects, d.Effects)
		c.graphqlPaging("/effects/paging", a.effects.gql, a.effects.paging, d.Effects.GraphQL)
	}
	if err := errors.Join(c.errs...); err != nil {
		return nil, err
	}
	return a, nil
}

// verbName refuses a tool or action name with "__": MCP names a tool
// system__name when two systems offer one of that name, and a name with
// its own "__" could be taken for another system's tool.
func (c *compiler) verbName(ptr, name string) {
	if strings.Contains(name, "__") {
		c.fail(ptr, fmt.Sprintf("the name %s has \"__\", which MCP uses between a system's name and a tool's (system__name)", name),
			"use single underscores, e.g. "+strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r == '_' }), "_"))
	}
}

func params(ps []ParamDesc) []adapter.Param {
	var out []adapter.Param
	for _, p := range ps {
		out = append(out, adapter.Param{Name: p.Name, Type: p.Type, Description: p.Description, Required: p.Required,
			Enum: p.Enum, Min: p.Minimum, Max: p.Maximum, MaxLength: p.MaxLength, Multiline: p.Multiline, Properties: params(p.Properties)})
	}
	return out
}

func (c *compiler) action(ptr string, ad ActionDesc, objects map[string]*object, kinds func() string) *action {
	act := &action{spec: adapter.ActionSpec{Name: ad.Name, Title: ad.Title, Description: ad.Description, Params: params(ad.Params),
		Risk: adapter.Risk(ad.Risk), Compensation: ad.Compensation, Limits: ad.Limits, Guidance: ad.Guidance,
		TargetKind: ad.Target.Kind, TargetParam: ad.Target.Param, AmountParam: ad.AmountParam,
		DefaultStage: ad.DefaultStage, DoneWords: ad.DoneWords.in(c.defaultLocale), RejectReasons: ad.RejectReasons}}
	if act.spec.Limits == nil {
		act.spec.Limits = []string{}
	}
	if ad.Concerns == string(adapter.ConcernsBusiness) {
		act.spec.Concerns = adapter.ConcernsBusiness
	}
	act.target = objects[ad.Target.Kind]
	if act.target == nil {
		c.fail(ptr+"/target/kind", fmt.Sprintf("no object kind %q", ad.Target.Kind), "use one of: "+kinds())
	}
	hasParam := func(name string) bool {
		return slices.ContainsFunc(ad.Params, func(p ParamDesc) bool { return p.Name == name })
	}
	if !hasParam(ad.Target.Param) {
		c.fail(ptr+"/target/param", fmt.Sprintf("no parameter %q", ad.Target.Param), "declare it under params, type string, required")
	}
	if ad.AmountParam != "" && !hasParam(ad.AmountParam) {
		c.fail(ptr+"/amount_param", fmt.Sprintf("no parameter %q", ad.AmountParam), "declare it under params, type integer")
	}
	scope := &exprScope{owner: "action " + ad.Name, params: ad.Params, argsBound: true, varsBound: true, dryRun: ad.DryRun != nil}
	for _, v := range ad.Vars {
		scope.allVars = append(scope.allVars, v.Name)
	}
	c.scope = scope
	defer func() { c.scope = nil }()
	for i, v := range ad.Vars {
		act.vars = append(act.vars, namedExpr{name: v.Name, expr: c.expr(fmt.Sprintf("%s/vars/%d/expr", ptr, i), v.Expr)})
		scope.vars = append(scope.vars, v.Name) // a var sees the vars before it
	}
	for i, g := range ad.Guards {
		gp := fmt.Sprintf("%s/guards/%d", ptr, i)
		act.guards = append(act.guards, guard{require: c.expr(gp+"/require", g.Require), code: g.Code,
			message: c.template(gp+"/message", g.Message), hint: c.template(gp+"/hint", g.Hint), field: g.Field, policy: g.PolicyRefusal})
	}
	if ad.DryRun != nil {
		act.dryRun = c.request(ptr+"/dry_run", *ad.DryRun)
	}
	q := ad.Quote
	qp := ptr + "/quote"
	act.quote = quoteTemplate{title: c.localText(qp+"/title", q.Title), amount: c.expr(qp+"/amount_cents", q.AmountCents),
		currency: c.template(qp+"/currency", q.Currency), now: q.EffectiveNow,
		confirm: c.localText(qp+"/confirm_label", q.ConfirmLabel), decline: c.localText(qp+"/decline_label", q.DeclineLabel)}
	if !ad.DoneWords.IsZero() {
		act.quote.done = c.localText(ptr+"/done_words", ad.DoneWords)
	}
	for i, l := range q.Lines {
		lp := fmt.Sprintf("%s/lines/%d", qp, i)
		act.quote.lines = append(act.quote.lines, lineTemplate{label: c.localText(lp+"/label", l.Label), from: c.localText(lp+"/from", l.From),
			to: c.localText(lp+"/to", l.To), emphasis: l.Emphasis, sum: l.Sum, when: c.expr(lp+"/when", l.When)})
	}
	if cd := q.Customer; cd != nil {
		cp := qp + "/customer"
		ct := &customerTemplate{title: c.localText(cp+"/title", cd.Title), reference: c.localText(cp+"/reference", cd.Reference),
			dateLabel: c.localText(cp+"/date_label", cd.DateLabel), arrives: c.localText(cp+"/money_arrives", cd.MoneyArrives),
			date: c.expr(cp+"/date", cd.Date), items: c.expr(cp+"/items", cd.Items)}
		for i, w := range cd.Why {
			wp := fmt.Sprintf("%s/why/%d", cp, i)
			ct.why = append(ct.why, whyTemplate{text: c.localText(wp+"/text", w.Text), when: c.expr(wp+"/when", w.When)})
		}
		act.quote.customer = ct
	}
	for i, s := range q.Consequences {
		act.quote.consequences = append(act.quote.consequences, c.localText(fmt.Sprintf("%s/consequences/%d", qp, i), s))
	}
	for i, s := range q.Constraints {
		act.quote.constraints = append(act.quote.constraints, c.localText(fmt.Sprintf("%s/constraints/%d", qp, i), s))
	}
	act.request = c.request(ptr+"/request", ad.Request)
	act.reference = c.template(ptr+"/result/reference", ad.Result.Reference)
	act.shortReference = c.template(ptr+"/result/short_reference", ad.Result.ShortReference)
	act.amount = c.expr(ptr+"/result/amount_cents", ad.Result.AmountCents)
	act.amountMajor = ad.Result.AmountUnit == "major"
	if act.amount == nil && ad.Result.AmountUnit != "" {
		c.fail(ptr+"/result/amount_unit", "amount_unit describes amount_cents, and the result has none", `add "amount_cents", or remove amount_unit`)
	}
	if ad.Result.Currency != "" {
		act.currency = c.template(ptr+"/result/currency", ad.Result.Currency)
	}
	act.data = map[string]*template{}
	for k, v := range ad.Result.Data {
		s, ok := v.(string)
		if !ok {
			c.fail(ptr+"/result/data/"+escapePointer(k), "must be a template string", "write e.g. \"{response.id}\"")
			continue
		}
		act.data[k] = c.template(ptr+"/result/data/"+escapePointer(k), s)
	}
	act.verify = verifyTemplate{path: c.path(ptr+"/verify/path", ad.Verify.Path), items: ad.Verify.Items, fields: map[string]*expr{},
		gql: c.graphql(ptr+"/verify/graphql", ad.Verify.GraphQL, false, ad.Params)}
	for k, v := range ad.Verify.Fields {
		act.verify.fields[k] = c.expr(ptr+"/verify/fields/"+escapePointer(k), v)
	}
	c.verifyExpect(ptr+"/verify/expect", ad.Verify.Expect, &act.verify)
	if ad.Precondition != nil {
		act.pre = c.precondition(ptr+"/precondition", *ad.Precondition, act)
		c.graphqlPrecondition(ptr+"/precondition", act)
	}
	c.everyArgumentShown(act) // the request's templates and the precondition's value
	if ad.Evidence != nil {
		// Evidence is read from an effect alone: args and vars are not bound.
		c.scope = &exprScope{owner: "action " + ad.Name, dryRun: ad.DryRun != nil}
		act.evidence = &evidence{match: c.expr(ptr+"/evidence/match", ad.Evidence.Match),
			reference: c.template(ptr+"/evidence/reference", ad.Evidence.Reference)}
	}
	return act
}

func (c *compiler) request(ptr string, r RequestDesc) *request {
	if r.GraphQL != nil {
		return c.graphqlRequest(ptr, r)
	}
	return &request{method: r.Method, path: c.path(ptr+"/path", r.Path), body: c.body(ptr+"/body", r.Body), hasBody: r.Body != nil,
		form: c.bodyEncoding(ptr, r)}
}

func (c *compiler) errorMapping(m ErrorMapping) errorMap {
	em := errorMap{codePtr: m.Code, messagePtr: m.Message}
	for i, r := range m.Rules {
		rp := fmt.Sprintf("/errors/rules/%d", i)
		rule := errorRule{systemCode: r.SystemCode, when: c.expr(rp+"/when", r.When), err: adapter.Error{Code: r.Code,
			Outcome: adapter.Outcome(r.Outcome), Message: r.Message, Hint: r.Hint, Retryable: r.Retryable, PolicyRefusal: r.PolicyRefusal}, field: r.Field}
		rule.statuses, rule.classes = statuses(r.Status)
		if rule.err.Message == "" {
			rule.err.Message = "The system refused the request."
		}
		em.rules = append(em.rules, rule)
	}
	return em
}

// idempotency reads how writes carry their key: idempotency_header, or
// exactly one way of idempotency.
func (c *compiler) idempotency(a *Adapter, d *Description) {
	switch {
	case d.Idempotency != nil && d.IdempotencyHeader != "":
		c.fail("/idempotency", "the file gives both idempotency and idempotency_header",
			`keep one: "idempotency": {"header": "`+d.IdempotencyHeader+`"} says the same as idempotency_header`)
	case d.Idempotency == nil && d.IdempotencyHeader == "":
		c.fail("", "the file does not say how a write carries its idempotency key",
			`add "idempotency": {"header": "Idempotency-Key"} (a header the system honours or records), {"body_field": "/request_id"} (a body field the system keeps under a unique index) or {"in_request": true} (every request uses {key} itself)`)
	case d.Idempotency == nil:
		a.idemHeader = d.IdempotencyHeader
	default:
		a.idemHeader, a.idemField = d.Idempotency.Header, d.Idempotency.BodyField
	}
}

// carriesKey refuses an action whose request cannot carry the key the way
// the file says: a body field needs a JSON object body without that field
// (the adapter sets it), in_request a path or body that uses key.
func (c *compiler) carriesKey(ptr string, act *action, d *Description, field string) {
	if act.request == nil {
		return
	}
	switch {
	case field != "":
		body, ok := act.request.body.(map[string]any)
		if !ok {
			c.fail(ptr, fmt.Sprintf("action %s sends no JSON object body, so the key has nowhere to go at %s", act.spec.Name, field),
				`give the request a "body" object, or carry the key another way ("idempotency": {"in_request": true} with {key} in the path)`)
			return
		}
		if _, taken := lookupPointer(bodyShape(body), field); taken {
			c.fail(ptr+"/body"+field, fmt.Sprintf("action %s writes %s itself, where the adapter sets the idempotency key", act.spec.Name, field),
				"remove it from the body: the adapter sets it to the call's key")
		}
	case d.Idempotency != nil && d.Idempotency.InRequest:
		uses := false
		for _, t := range append([]*template{act.request.path}, bodyTemplates(act.request.body)...) {
			uses = uses || templateUses(t, "key")
		}
		if !uses {
			c.fail(ptr, fmt.Sprintf("action %s's request does not use key, so the system cannot tell a repeat from a new write", act.spec.Name),
				`use {key} (or an id derived from it, "re_{short_hash(key)}") in the request's path or body`)
		}
	}
}

// bodyShape is a compiled body with its templates as placeholders, for
// looking fields up.
func bodyShape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = bodyShape(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = bodyShape(val)
		}
		return out
	}
	return true
}

// withValue returns a copy of body with v set at the JSON Pointer field,
// making the objects on the way.
func withValue(body any, field string, v any) any {
	root, _ := body.(map[string]any)
	out := make(map[string]any, len(root)+1)
	for k, v := range root {
		out[k] = v
	}
	toks := strings.Split(field[1:], "/")
	m := out
	for i, tok := range toks {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if i == len(toks)-1 {
			m[tok] = v
			break
		}
		next, ok := m[tok].(map[string]any)
		cp := make(map[string]any, len(next)+1)
		if ok {
			for k, v := range next {
				cp[k] = v
			}
		}
		m[tok] = cp
		m = cp
	}
	return out
}

// statuses reads an error rule's status list: numbers, and classes "4xx".
func statuses(list []any) (exact, classes []int) {
	for _, s := range list {
		switch x := s.(type) {
		case float64:
			exact = append(exact, int(x))
		case string:
			n, _ := strconv.Atoi(x[:1])
			classes = append(classes, n)
		}
	}
	return exact, classes
}

// precondition compiles an action's precondition: the version goes in a
// header or a body field (or the request's own filter holds it), and the
// refusal is target_changed.
func (c *compiler) precondition(ptr string, pd PreconditionDesc, act *action) *precondition {
	pre := &precondition{header: pd.Header, bodyField: pd.BodyField}
	if pd.Value != "" {
		pre.value = c.template(ptr+"/value", pd.Value)
	}
	pre.refusal = errorRule{systemCode: pd.Refusal.SystemCode, when: c.expr(ptr+"/refusal/when", pd.Refusal.When),
		err: adapter.Error{Code: adapter.CodeStaleTarget, Outcome: adapter.Refused,
			Message: "The system refused the write because the object changed since it was read; nothing was changed.",
			Hint:    "Preview the action again and have the new quote confirmed."}}
	pre.refusal.statuses, pre.refusal.classes = statuses(pd.Refusal.Status)
	if len(pre.refusal.statuses)+len(pre.refusal.classes) == 0 && pd.Refusal.SystemCode == "" && pd.Refusal.When == "" {
		c.fail(ptr+"/refusal", "the refusal matches every answer", `say how the system refuses: "status": [412], a "system_code", or "when"`)
	}
	// A refusal that matches a success would record an applied write as
	// refused: a 2xx refusal needs "when", and the whole class never.
	for _, cl := range pre.refusal.classes {
		if cl == 2 {
			c.fail(ptr+"/refusal/status", `"2xx" would take every applied write for a refusal`, "name the refusal's own status, e.g. 409 or 412")
		}
	}
	for _, st := range pre.refusal.statuses {
		if st >= 200 && st < 300 && pd.Refusal.When == "" {
			c.fail(ptr+"/refusal/status", fmt.Sprintf("%d is a success: alone it would take an applied write for a refusal", st),
				`add "when", an expression that is true only on the refusal's answer`)
		}
	}
	switch {
	case pd.Header != "" && pd.BodyField != "":
		c.fail(ptr, "a precondition goes in a header or a body field, not both", "keep one of header and body_field")
	case pd.BodyField != "":
		body, ok := act.request.body.(map[string]any)
		if !ok {
			c.fail(ptr+"/body_field", fmt.Sprintf("action %s sends no JSON object body to put the version in", act.spec.Name),
				`give the request a "body" object, or send the version in a header ("header": "If-Match")`)
		} else if _, taken := lookupPointer(bodyShape(body), pd.BodyField); taken {
			c.fail(ptr+"/body_field", fmt.Sprintf("action %s writes %s itself, where the adapter sets the target's version", act.spec.Name, pd.BodyField),
				"remove it from the body")
		}
	}
	if pd.Value == "" && (pd.Header != "" || pd.BodyField != "") && act.target != nil && act.target.versionPtr == "" {
		c.fail(ptr, fmt.Sprintf("objects.%s has no version to send", act.target.kind),
			`add "version" (a JSON Pointer to the object's version) to objects.`+act.target.kind+`, or say what to send in "value"`)
	}
	return pre
}

// minSettleAfter is the shortest settle_after a file may declare: longer
// than a call may take to be sent and committed (the console's call
// timeout, 15 s by default, and its lease margin).
const minSettleAfter = time.Minute

// pointersOverlap says whether two JSON Pointers name the same field or
// one lies inside the other.
func pointersOverlap(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// authoritative reads an effects lookup the file declares authoritative:
// it must read the effects by key, and settle_after is a duration
// (default five minutes).
func (c *compiler) authoritative(e *effectsLookup, d *EffectsLookup) {
	if d.SettleAfter != "" && !d.Authoritative {
		c.fail("/effects/settle_after", "settle_after applies only to an authoritative lookup", `add "authoritative": true, or remove settle_after`)
	}
	if !d.Authoritative {
		return
	}
	e.authoritative, e.settleAfter = true, 5*time.Minute
	if d.SettleAfter != "" {
		dur, err := time.ParseDuration(d.SettleAfter)
		switch {
		case err != nil || dur <= 0:
			c.fail("/effects/settle_after", fmt.Sprintf("%q is not a positive duration", d.SettleAfter), `write e.g. "5m" or "90s"`)
		case dur < minSettleAfter:
			// Shorter than a call may take to commit (the console's call
			// timeout and lease): a call still being sent would be settled.
			c.fail("/effects/settle_after", fmt.Sprintf("%s is shorter than a call may take to commit", dur),
				fmt.Sprintf("write at least %s", minSettleAfter))
		}
		e.settleAfter = dur
	}
	if !templateUses(e.path, "key") && !graphqlUses(e.gql, "key") {
		c.fail("/effects/path", "an authoritative lookup must read the effects under the call's key",
			`use {key} in the path, e.g. "/events?request_id={key}"`)
	}
}
