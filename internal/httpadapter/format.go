package httpadapter

// The description file's format, as Go types. schema.json is the same
// format as a JSON Schema; Load checks a file against it before decoding
// it into these types, so a field here and a property there never differ.
//
// Three kinds of string carry logic, all in CEL (https://cel.dev):
//
//   - an expression ("args.amount_cents <= vars.refundable"), in fields
//     named require, when, match, terms, owner and in vars;
//   - a template: text with {expression} placeholders ("Order {target.id}"),
//     in titles, messages, labels and paths (a placeholder in a path is
//     URL-escaped);
//   - a body: JSON whose string values are templates, and a string that is
//     exactly one placeholder ("{args.amount_cents}") keeps the value's type.

// Description is one system described in a file.
type Description struct {
	Name              string                `json:"name"`
	Title             string                `json:"title"`
	BaseURL           string                `json:"base_url"`
	BaseURLEnv        string                `json:"base_url_env"`
	Auth              Auth                  `json:"auth"`
	IdempotencyHeader string                `json:"idempotency_header"`
	Idempotency       *IdempotencyDesc      `json:"idempotency"`
	Principal         PrincipalLookup       `json:"principal"`
	Objects           map[string]ObjectSpec `json:"objects"`
	ReadTools         []ReadToolDesc        `json:"read_tools"`
	Actions           []ActionDesc          `json:"actions"`
	Errors            ErrorMapping          `json:"errors"`
	Effects           *EffectsLookup        `json:"effects"`
	// CustomerBrand is how the system is named to its customers (brand.go).
	CustomerBrand *CustomerBrandDesc `json:"customer_brand"`
	// Protocol is "http" (or "") or "graphql": then the reads and writes
	// that give a GraphQLDesc POST it to Endpoint (default "/graphql").
	Protocol string `json:"protocol"`
	Endpoint string `json:"endpoint"`
	// BodyEncoding ("json", the default, or "form") and FormStyle
	// ("brackets", the default, or "repeat") say how every request's body
	// is written, unless the request says otherwise (form.go).
	BodyEncoding string `json:"body_encoding"`
	FormStyle    string `json:"form_style"`
}

// CustomerBrandDesc is adapter.Brand in the file: the business's name as
// its customers know it, an optional https:// logo, and the IANA time
// zone customer pages show times in until the customer's own is known.
type CustomerBrandDesc struct {
	Name     string `json:"name"`
	LogoURL  string `json:"logo_url"`
	TimeZone string `json:"time_zone"`
	// Locale is the BCP 47 tag of the language plain-string quote texts
	// are written in, and the entry every per-locale text must have
	// (locale.go); "en" when absent.
	Locale string `json:"locale"`
}

// IdempotencyDesc says how every write carries its idempotency key, one
// of three ways: in a header the system honours or records (Header), in a
// field of every write's body that the system keeps under a unique index
// (BodyField, a JSON Pointer), or in the request itself, which the file
// writes with {key} (InRequest: an id derived from the key, a key in a
// path). IdempotencyHeader is Header.
type IdempotencyDesc struct {
	Header    string `json:"header"`
	BodyField string `json:"body_field"`
	InRequest bool   `json:"in_request"`
}

// Auth says how every request authenticates. Every secret is read from
// the environment variable the file names when the file is loaded and is
// never written to the file, the database or the log (auth.go).
type Auth struct {
	// Type is "none", "bearer", "basic", "header", or
	// "oauth2_client_credentials", "oauth2_refresh_token" (oauth.go) or
	// "hmac" (hmac.go).
	Type     string `json:"type"`
	Username string `json:"username"`
	// Header carries the secret ("header") or the signature ("hmac").
	Header    string `json:"header"`
	SecretEnv string `json:"secret_env"`
	// TokenURL (a URL, or a path under the base URL) or TokenURLEnv is the
	// OAuth 2 token endpoint; the client's id and secret, and the refresh
	// token Countersign starts from, are environment variables.
	TokenURL        string   `json:"token_url"`
	TokenURLEnv     string   `json:"token_url_env"`
	ClientIDEnv     string   `json:"client_id_env"`
	ClientSecretEnv string   `json:"client_secret_env"`
	RefreshTokenEnv string   `json:"refresh_token_env"`
	Scopes          []string `json:"scopes"`
	Audience        string   `json:"audience"`
	// ClientAuth is "basic", "body", or "" (tried in that order).
	ClientAuth string `json:"client_auth"`
	// Signed lists what an HMAC signature covers ("method", "path",
	// "timestamp", "body"), joined by Separator (a newline when nil);
	// Encoding is "hex" or "base64", Prefix is written before it, and
	// TimestampHeader carries the signed timestamp.
	Signed          []string `json:"signed"`
	Separator       *string  `json:"separator"`
	Encoding        string   `json:"encoding"`
	Prefix          string   `json:"prefix"`
	TimestampHeader string   `json:"timestamp_header"`
}

// PrincipalLookup maps the principal (the customer's e-mail, as
// `principal`) to exactly one account of the system (as `account`).
type PrincipalLookup struct {
	Path  string `json:"path"`
	Items string `json:"items"`
	Match string `json:"match"`
	// GraphQL, in a graphql file, is read instead of Path.
	GraphQL *GraphQLDesc `json:"graphql"`
	// Contact, when given, says where the account keeps the customer's
	// e-mail and name, so the console can send a one-time code there.
	Contact *ContactDesc `json:"contact"`
}

// ContactDesc holds JSON Pointers into the account.
type ContactDesc struct {
	Email string `json:"email"`
	Name  string `json:"name"`
	// Locale, optional, points at the customer's language (a BCP 47 tag):
	// the business's word on which language the customer reads.
	Locale string `json:"locale"`
}

// ObjectSpec says how one kind of object is read and resolved.
type ObjectSpec struct {
	// Get reads one object by id ({id}); IDPattern says which references are ids.
	Get       string `json:"get"`
	IDPattern string `json:"id_pattern"`
	// List reads the candidates for a reference in words; Items points at
	// the array in the answer ("" when the answer is the array).
	List  string `json:"list"`
	Items string `json:"items"`
	// Owner, when set, must be true of every object the principal may
	// touch ("object.customer_id == account.id"); others are not found.
	Owner string `json:"owner"`
	// ID and Version are JSON Pointers into the object.
	ID      string `json:"id"`
	Version string `json:"version"`
	// Display is a template naming the object for a person.
	Display string `json:"display"`
	// Terms is an expression giving the words that describe the object.
	Terms string `json:"terms"`
	// Exact, when true of one candidate, resolves to it whatever else matches.
	Exact string `json:"exact"`
	// Paging, optional, says how List continues on further pages.
	Paging *PagingDesc `json:"paging"`
	// GetGraphQL and ListGraphQL, in a graphql file, are read instead of
	// Get and List.
	GetGraphQL  *GraphQLDesc `json:"get_graphql"`
	ListGraphQL *GraphQLDesc `json:"list_graphql"`
	// Identity, optional, is the business key that makes an object of this
	// kind the same object as another system's.
	Identity *IdentityDesc `json:"identity"`
}

// IdentityDesc declares an object kind's business key: Name is the key's
// business name ("order_number"), the same in every system that holds
// it; Value a CEL expression over the object as read giving the key.
type IdentityDesc struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ParamDesc is one argument, mirroring adapter.Param.
type ParamDesc struct {
	Name        string      `json:"name"`
	Type        string      `json:"type"`
	Description string      `json:"description"`
	Required    bool        `json:"required"`
	Enum        []string    `json:"enum"`
	Minimum     *int64      `json:"minimum"`
	Maximum     *int64      `json:"maximum"`
	MaxLength   int         `json:"max_length"`
	Multiline   bool        `json:"multiline"`
	Properties  []ParamDesc `json:"properties"`
}

// ReadToolDesc is a read verb: one of the principal's objects (Object
// with Param naming the argument), a list of them (List), or a plain
// request (Path). Fields is the allowlist of JSON Pointers copied into
// the answer ("*" steps into every element of an array).
type ReadToolDesc struct {
	Name        string      `json:"name"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Params      []ParamDesc `json:"params"`
	Object      string      `json:"object"`
	Param       string      `json:"param"`
	List        string      `json:"list"`
	Path        string      `json:"path"`
	Items       string      `json:"items"`
	Fields      []string    `json:"fields"`
	MaxItems    int         `json:"max_items"`
	// Account, when true, reads the principal's own account (then Path,
	// when given, over account and principal, never args): what the tool
	// reads is bound from the task's customer, not from the arguments.
	Account bool `json:"account"`
	// Paging, optional, says how Path's list continues on further pages.
	Paging *PagingDesc `json:"paging"`
	// GraphQL, in a graphql file, is read instead of Path.
	GraphQL *GraphQLDesc `json:"graphql"`
}

// ActionDesc is one write verb.
type ActionDesc struct {
	Name         string      `json:"name"`
	Title        string      `json:"title"`
	Description  string      `json:"description"`
	Guidance     string      `json:"guidance"`
	Risk         string      `json:"risk"`
	Compensation string      `json:"compensation"`
	Limits       []string    `json:"limits"`
	Params       []ParamDesc `json:"params"`
	Target       TargetDesc  `json:"target"`
	AmountParam  string      `json:"amount_param"`
	// DefaultStage, DoneWords and RejectReasons are adapter.ActionSpec's:
	// the first policy stage (zero: 3), what "done" is called (empty:
	// "Done") and the preset reasons an agent rejects it with. DoneWords
	// is a quote text too: per locale, the customer's page reads it in
	// their language (adapter.Quote.DoneWords); the assistant is told the
	// default locale's.
	DefaultStage  int       `json:"default_stage"`
	DoneWords     LocalText `json:"done_words"`
	RejectReasons []string  `json:"reject_reasons"`
	// Concerns is adapter.ActionSpec's: "business" for an action on the
	// business's own objects (its catalogue), which customers' lists of
	// their requests never show; empty or "customer" otherwise.
	Concerns string `json:"concerns"`
	// Vars are named expressions, evaluated in order, as vars.<name>.
	Vars    []NamedExpr  `json:"vars"`
	Guards  []Guard      `json:"guards"`
	DryRun  *RequestDesc `json:"dry_run"`
	Quote   QuoteDesc    `json:"quote"`
	Request RequestDesc  `json:"request"`
	// Precondition, optional, is a condition the system enforces on the
	// write, whose refusal means the target changed.
	Precondition *PreconditionDesc `json:"precondition"`
	Result       ResultDesc        `json:"result"`
	Verify       VerifyDesc        `json:"verify"`
	// Evidence recognises this action's effect among the system's effects
	// recorded under the call's key (see Description.Effects).
	Evidence *EvidenceDesc `json:"evidence"`
}

// TargetDesc names the argument that names the object acted on.
type TargetDesc struct {
	Kind  string `json:"kind"`
	Param string `json:"param"`
}

// NamedExpr is one of an action's vars.
type NamedExpr struct {
	Name string `json:"name"`
	Expr string `json:"expr"`
}

// Guard refuses the action unless Require is true. Message is a template.
type Guard struct {
	Require       string `json:"require"`
	Code          string `json:"code"`
	Message       string `json:"message"`
	Hint          string `json:"hint"`
	Field         string `json:"field"`
	PolicyRefusal bool   `json:"policy_refusal"`
}

// RequestDesc is one HTTP request: method, path template and body, and
// how the body is written when not as the file's BodyEncoding and
// FormStyle say.
type RequestDesc struct {
	Method       string `json:"method"`
	Path         string `json:"path"`
	Body         any    `json:"body"`
	BodyEncoding string `json:"body_encoding"`
	FormStyle    string `json:"form_style"`
	// GraphQL, in a graphql file, is sent instead of Method, Path and Body.
	GraphQL *GraphQLDesc `json:"graphql"`
}

// QuoteDesc builds the dry run's quote; every text is a template, and
// every text the customer reads a LocalText (one template, or one per
// locale).
type QuoteDesc struct {
	Title        LocalText       `json:"title"`
	Lines        []QuoteLineDesc `json:"lines"`
	Consequences []LocalText     `json:"consequences"`
	Constraints  []LocalText     `json:"constraints"`
	AmountCents  string          `json:"amount_cents"`
	Currency     string          `json:"currency"`
	EffectiveNow bool            `json:"effective_now"`
	ConfirmLabel LocalText       `json:"confirm_label"`
	DeclineLabel LocalText       `json:"decline_label"`
	// Customer, optional, is what the customer's pages show instead of
	// the system's ids (adapter.CustomerFacts).
	Customer *CustomerDesc `json:"customer"`
}

// CustomerDesc builds a quote's adapter.CustomerFacts: Title, Reference,
// DateLabel and MoneyArrives are templates, per locale if need be
// ("Order {target.number}", "Commande {target.number}"); Date is a CEL expression giving
// an RFC 3339 time; Items a CEL expression giving a list of strings; each
// Why line is shown when its When holds.
type CustomerDesc struct {
	Title        LocalText `json:"title"`
	Reference    LocalText `json:"reference"`
	Date         string    `json:"date"`
	DateLabel    LocalText `json:"date_label"`
	Items        string    `json:"items"`
	Why          []WhyDesc `json:"why"`
	MoneyArrives LocalText `json:"money_arrives"`
}

// WhyDesc is one sentence of why an amount is less than what was paid.
type WhyDesc struct {
	Text LocalText `json:"text"`
	When string    `json:"when"`
}

// QuoteLineDesc is one line of a quote, shown when When is true (or empty).
type QuoteLineDesc struct {
	Label    LocalText `json:"label"`
	From     LocalText `json:"from"`
	To       LocalText `json:"to"`
	Emphasis bool      `json:"emphasis"`
	// Sum marks the line as the sum of the money lines above it.
	Sum  bool   `json:"sum"`
	When string `json:"when"`
}

// ResultDesc turns the system's answer (`response`) into the result.
type ResultDesc struct {
	Reference string `json:"reference"`
	// ShortReference, optional, is the reference as the system shows it to
	// its customers (adapter.Result.ShortReference).
	ShortReference string         `json:"short_reference"`
	Data           map[string]any `json:"data"`
	// AmountCents (CEL) and Currency (template), optional, read the
	// amount the system recorded from its answer (adapter.Result's).
	AmountCents string `json:"amount_cents"`
	Currency    string `json:"currency"`
	// AmountUnit is AmountCents's unit, as EffectsLookup.AmountUnit.
	AmountUnit string `json:"amount_unit"`
}

// VerifyDesc reads the target again (Path); the object, or one element
// of the array at Items, must have every field of Fields (JSON Pointer →
// expression of the expected value).
type VerifyDesc struct {
	Path   string            `json:"path"`
	Items  string            `json:"items"`
	Fields map[string]string `json:"fields"`
	// Expect, optional, is a CEL condition over before (the target's
	// fields it names, as the dry run read them), after (what Path reads
	// back, or the element of Items) and args that must also hold.
	Expect string `json:"expect"`
	// GraphQL, in a graphql file, is read instead of Path.
	GraphQL *GraphQLDesc `json:"graphql"`
}

// EffectsLookup reads the system's own record of effects by key ({key}).
type EffectsLookup struct {
	Path   string `json:"path"`
	Items  string `json:"items"`
	ID     string `json:"id"`
	At     string `json:"at"`
	Kind   string `json:"kind"`
	Object string `json:"object"`
	// Authoritative says no effect under a key, SettleAfter after the
	// call, proves the call was not applied.
	Authoritative bool   `json:"authoritative"`
	SettleAfter   string `json:"settle_after"`
	// Amount, optional, is a JSON Pointer to the effect's amount, in
	// AmountUnit ("cents", the default: minor units; "major": whole units
	// with decimals, 12.5 for 12.50), and Currency a JSON Pointer to its
	// currency code.
	Amount     string `json:"amount"`
	AmountUnit string `json:"amount_unit"`
	Currency   string `json:"currency"`
	// Paging, optional, says how the effects continue on further pages.
	Paging *PagingDesc `json:"paging"`
	// GraphQL, in a graphql file, is read instead of Path.
	GraphQL *GraphQLDesc `json:"graphql"`
}

// EvidenceDesc recognises an action's effect (`effect`) and its reference.
type EvidenceDesc struct {
	Match     string `json:"match"`
	Reference string `json:"reference"`
}

// ErrorMapping maps the system's error answers; Rules are tried in order
// and the defaults apply when none matches.
type ErrorMapping struct {
	// Code and Message are JSON Pointers into the error body.
	Code    string      `json:"code"`
	Message string      `json:"message"`
	Rules   []ErrorRule `json:"rules"`
}

// ErrorRule matches an error answer by status (e.g. 409 or "4xx"), by the
// system's code, and/or by an expression over `status` and `body`.
type ErrorRule struct {
	Status        []any  `json:"status"`
	SystemCode    string `json:"system_code"`
	When          string `json:"when"`
	Code          string `json:"code"`
	Outcome       string `json:"outcome"`
	Message       string `json:"message"`
	Hint          string `json:"hint"`
	Retryable     bool   `json:"retryable"`
	PolicyRefusal bool   `json:"policy_refusal"`
	Field         string `json:"field"`
}

// PreconditionDesc is a condition the system itself enforces on a write:
// the target's version (or Value) in a Header such as If-Match or at a
// BodyField, or, with neither, a conditional filter the request writes
// itself. Refusal is the system's answer when the condition fails; it is
// mapped to target_changed, nothing changed.
type PreconditionDesc struct {
	Header    string        `json:"header"`
	BodyField string        `json:"body_field"`
	Value     string        `json:"value"`
	Refusal   RefusalAnswer `json:"refusal"`
}

// RefusalAnswer matches an answer by status, system code and a CEL
// condition over status and body, as an error rule does.
type RefusalAnswer struct {
	Status     []any  `json:"status"`
	SystemCode string `json:"system_code"`
	When       string `json:"when"`
}
