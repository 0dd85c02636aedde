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
)

// DraftOptions says what a draft from an OpenAPI document holds besides
// what the document says.
type DraftOptions struct {
	// Name is the system's name; empty derives it from info.title.
	Name string
	// Write lists the operationIds that become write actions, one each.
	Write []string
}

// Draft is a starting description file made from a system's OpenAPI
// document: it loads, and what only a person can say is left as strings
// beginning with TODO (see Unfinished).
type Draft struct {
	// File is the description, indented JSON.
	File []byte
	// Env names the environment variables the file reads, to set before
	// it is loaded.
	Env []string
	// Notes say what the draft assumed or left out, one sentence each.
	Notes []string
}

// todo begins every string a person must replace before the file is used.
const todo = "TODO: "

// closed is a CEL condition that holds of nothing until a person writes
// what it should say: a TODO string compared with "".
func closed(what string) string {
	return "'" + todo + strings.ReplaceAll(what, "'", "") + "' == ''"
}

// DraftFromOpenAPI writes a description file from an OpenAPI 3.0 or 3.1
// document (JSON or YAML): the base URL from servers, auth from the
// security scheme, an object kind for every GET of one item, a read tool
// for every GET, and a write action for each operation opts.Write names,
// with guards, quote texts and unknown read-backs left as TODO. It fails
// naming the operation and the fix when a chosen operation cannot be an
// action, and lists the candidates when none is chosen.
func DraftFromOpenAPI(raw []byte, opts DraftOptions) (*Draft, error) {
	doc, err := parseOpenAPI(raw)
	if err != nil {
		return nil, err
	}
	ops, err := doc.operations()
	if err != nil {
		return nil, err
	}
	d := &drafter{doc: doc, ops: ops, kinds: map[string]*draftKind{}}
	d.name = opts.Name
	if d.name == "" {
		d.name = systemName(doc.Info.Title)
	}
	d.envPrefix = strings.ToUpper(strings.ReplaceAll(d.name, "-", "_"))
	if len(opts.Write) == 0 {
		return nil, fmt.Errorf("choose the write operations with -write: a description needs at least one action (fix: -write %s)", strings.Join(d.writeCandidates(), ","))
	}
	file := obj{{"name", d.name}, {"title", orDefault(doc.Info.Title, d.name)}}
	file = append(file, d.baseURL()...)
	au, err := d.auth()
	if err != nil {
		return nil, err
	}
	file = append(file, kv{"auth", au}, kv{"idempotency", obj{{"header", d.idempotencyHeader()}}})
	// Until a person says how a customer maps to an account and whose
	// each object is, the file loads closed: the principal lookup and every
	// owner are false, so every object is not_found to every customer.
	file = append(file, kv{"principal", obj{{"path", "/TODO-customers?email={filter_quote(principal)}"},
		{"match", closed("say how the principal (the customer's e-mail) is matched, e.g. account.email.lowerAscii() == principal")}}})
	d.findKinds()
	if len(d.kinds) == 0 {
		return nil, errors.New("no GET operation reads one object by its id (GET /things/{id} answering an object), so the draft has no object for an action to act on (fix: describe the item GETs in the document, or write \"objects\" by hand)")
	}
	var actions []any
	var errs []error
	for _, id := range opts.Write {
		a, err := d.action(strings.TrimSpace(id))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		actions = append(actions, a)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if form := formAtFileLevel(actions); form != nil {
		at := file.index("idempotency") + 1
		file = slices.Insert(file, at, form...)
	}
	objects := obj{}
	for _, k := range slices.Sorted(maps.Keys(d.kinds)) {
		objects = append(objects, kv{k, d.kinds[k].spec()})
	}
	file = append(file, kv{"objects", objects}, kv{"read_tools", d.readTools()}, kv{"actions", actions},
		kv{"errors", d.errorMapping()})
	out, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return nil, err
	}
	slices.Sort(d.env)
	return &Draft{File: append(out, '\n'), Env: slices.Compact(d.env), Notes: d.notes}, nil
}

type drafter struct {
	doc       *oaDoc
	ops       []*oaOperation
	name      string
	envPrefix string
	kinds     map[string]*draftKind
	env       []string
	notes     []string
}

func (d *drafter) note(format string, a ...any) { d.notes = append(d.notes, fmt.Sprintf(format, a...)) }

func (d *drafter) writeCandidates() []string {
	var out []string
	for _, op := range d.ops {
		if op.method != "GET" {
			out = append(out, op.name())
		}
	}
	if len(out) == 0 {
		return []string{"OPERATION_ID"}
	}
	return out
}

var serverVar = regexp.MustCompile(`\{([^}]*)\}`)

// baseURL is the first server's URL with its variables' defaults, or an
// environment variable when the document names no absolute one.
func (d *drafter) baseURL() obj {
	if len(d.doc.Servers) > 0 {
		s := d.doc.Servers[0]
		u := serverVar.ReplaceAllStringFunc(s.URL, func(m string) string { return s.Variables[m[1:len(m)-1]].Default })
		if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
			return obj{{"base_url", strings.TrimRight(u, "/")}}
		}
	}
	env := d.envPrefix + "_URL"
	d.env = append(d.env, env)
	d.note("The document names no absolute server URL: the file reads the base URL from %s.", env)
	return obj{{"base_url_env", env}}
}

// auth maps the security scheme the document requires first (or its only
// one) to the file's auth; the secret is always an environment variable.
func (d *drafter) auth() (obj, error) {
	schemes := d.doc.Components.SecuritySchemes
	var name string
	for _, req := range d.doc.Security {
		for _, n := range slices.Sorted(maps.Keys(req)) {
			if _, ok := schemes[n]; ok && name == "" {
				name = n
			}
		}
	}
	if name == "" && len(schemes) > 0 {
		name = slices.Sorted(maps.Keys(schemes))[0]
	}
	if name == "" {
		d.note("The document names no security scheme: the draft sends no credentials (auth none).")
		return obj{{"type", "none"}}, nil
	}
	s := schemes[name]
	secret := func(suffix string) string {
		env := d.envPrefix + suffix
		d.env = append(d.env, env)
		return env
	}
	switch {
	case s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
		return obj{{"type", "bearer"}, {"secret_env", secret("_TOKEN")}}, nil
	case s.Type == "http" && strings.EqualFold(s.Scheme, "basic"):
		return obj{{"type", "basic"}, {"username", "TODO-username"}, {"secret_env", secret("_PASSWORD")}}, nil
	case s.Type == "apiKey" && s.In == "header" && headerName.MatchString(s.Name):
		return obj{{"type", "header"}, {"header", s.Name}, {"secret_env", secret("_API_KEY")}}, nil
	case s.Type == "oauth2" && s.Flows.ClientCredentials != nil && s.Flows.ClientCredentials.TokenURL != "":
		return d.clientCredentials(name, s), nil
	case s.Type == "oauth2" || s.Type == "openIdConnect":
		d.note("Security scheme %s is %s: the file sends a bearer token from %s_TOKEN, obtained outside the console.", name, s.Type, d.envPrefix)
		return obj{{"type", "bearer"}, {"secret_env", secret("_TOKEN")}}, nil
	}
	return nil, fmt.Errorf("security scheme %s (%s in %s) cannot be described: a file sends its secret only as a bearer token, basic auth or a header (fix: offer one of those in the system, or remove the scheme from the document's security)", name, s.Type, orDefault(s.In, "-"))
}

// clientCredentials drafts an OAuth 2 client credentials flow: its token
// URL, the scopes the document's security requirement asks of the scheme
// (every scope of the flow when it names none), the client's id and
// secret from the environment.
func (d *drafter) clientCredentials(name string, s oaSecurity) obj {
	flow := s.Flows.ClientCredentials
	tokenURL := flow.TokenURL
	if !strings.HasPrefix(tokenURL, "http://") && !strings.HasPrefix(tokenURL, "https://") && !strings.HasPrefix(tokenURL, "/") {
		tokenURL = "/" + tokenURL
	}
	var scopes []string
	for _, req := range d.doc.Security {
		if asked, ok := req[name]; ok && scopes == nil {
			scopes = asked
		}
	}
	if len(scopes) == 0 {
		scopes = slices.Sorted(maps.Keys(flow.Scopes))
		if len(scopes) > 0 {
			d.note("Security scheme %s requires no scopes of its own: the draft asks for every scope of its client credentials flow (%s); keep only those the actions need.", name, strings.Join(scopes, ", "))
		}
	}
	id, secret := d.envPrefix+"_CLIENT_ID", d.envPrefix+"_CLIENT_SECRET"
	d.env = append(d.env, id, secret)
	au := obj{{"type", "oauth2_client_credentials"}, {"token_url", tokenURL}, {"client_id_env", id}, {"client_secret_env", secret}}
	if len(scopes) > 0 {
		au = append(au, kv{"scopes", scopes})
	}
	return au
}

var headerName = regexp.MustCompile(`^[A-Za-z0-9-]+$`)

// idempotencyHeader is the header a write operation takes for its key,
// when the document names one.
func (d *drafter) idempotencyHeader() string {
	for _, op := range d.ops {
		for _, p := range op.Parameters {
			if n := strings.ToLower(p.Name); p.In == "header" && (strings.Contains(n, "idempotency") || n == "x-request-id") && headerName.MatchString(p.Name) {
				return p.Name
			}
		}
	}
	d.note("No write takes an idempotency header in the document: the file sends the key as Idempotency-Key; check the system honours or records it, or see \"Systems without idempotency headers\" in internal/httpadapter/README.md.")
	return "Idempotency-Key"
}

// errorMapping points at the code and message of the first 4xx answer's
// schema that has them.
func (d *drafter) errorMapping() obj {
	for _, op := range d.ops {
		for _, code := range slices.Sorted(maps.Keys(op.Responses)) {
			s := jsonSchema(op.Responses[code].Content)
			if !strings.HasPrefix(code, "4") || s == nil {
				continue
			}
			props, _ := s.fields()
			if _, ok := props["code"]; ok {
				return obj{{"code", "/code"}, {"message", "/message"}}
			}
			if e, ok := props["error"]; ok {
				if ep, _ := e.fields(); ep["code"] != nil {
					return obj{{"code", "/error/code"}, {"message", "/error/message"}}
				}
			}
		}
	}
	d.note("No 4xx answer of the document has a code field: errors.code is /code; map the system's refusals under errors.rules.")
	return obj{{"code", "/code"}}
}

var nonName = regexp.MustCompile(`[^a-z0-9]+`)

// systemName makes a system name ([a-z][a-z0-9-]*) of a title.
func systemName(title string) string {
	n := strings.Trim(nonName.ReplaceAllString(strings.ToLower(title), "-"), "-")
	n = strings.TrimLeft(n, "0123456789-")
	if len(n) > 40 {
		n = strings.TrimRight(n[:40], "-")
	}
	return orDefault(n, "system")
}

var camelBreak = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// snake makes a verb or parameter name ([a-z][a-z0-9_]*) of an operationId
// or a field name; letters only when digits are not allowed.
func snake(s string, lettersOnly bool) string {
	s = strings.ToLower(camelBreak.ReplaceAllString(s, "${1}_${2}"))
	re := nonName
	if lettersOnly {
		re = regexp.MustCompile(`[^a-z]+`)
	}
	s = strings.Trim(re.ReplaceAllString(s, "_"), "_")
	return strings.TrimLeft(s, "0123456789_")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// obj is a JSON object that keeps its keys in order, so that the draft
// reads top-down as the README describes the format.
type obj []kv

type kv struct {
	k string
	v any
}

// MarshalJSON writes the object's keys in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.k)
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
