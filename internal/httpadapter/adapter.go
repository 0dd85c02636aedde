package httpadapter

import (
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/tracing"
)

// Config is what a loaded description is connected with.
type Config struct {
	// Ledger is the console's request ledger; Execute sends nothing without it.
	Ledger *adapter.Ledger
	// HTTPClient sends the requests; nil means a client with a 10 s timeout.
	// Its CheckRedirect is replaced: no redirect is followed.
	HTTPClient *http.Client
	// Now is the clock of vars (now) and verifications; nil means time.Now.
	Now func() time.Time
	// Logger receives what cannot be returned; nil discards it.
	Logger *slog.Logger
	// Getenv reads the environment variables a file names for its base URL
	// and secret; nil means os.Getenv.
	Getenv func(string) string
}

func (c Config) withDefaults() Config {
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	// Every request carries the traceparent of the write it is part of,
	// and no redirect is followed (adapter.NoRedirects), an injected
	// client's neither.
	traced := adapter.NoRedirects(c.HTTPClient)
	traced.Transport = tracing.Transport(traced.Transport)
	c.HTTPClient = traced
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	return c
}

// Adapter is a system described in a file, as an adapter.System. It holds
// no state beyond its compiled description and is safe for concurrent use.
type Adapter struct {
	name, title, file string
	base              string
	// auth gives every request its credential (auth.go).
	auth       authorizer
	idemHeader string
	// idemField, when not "", is the JSON Pointer of every write's body
	// the key is set at.
	idemField string
	http      *http.Client
	ledger    *adapter.Ledger
	clock     func() time.Time
	log       *slog.Logger

	principal *principalLookup
	objects   map[string]*object
	reads     []*readTool
	actions   []*action
	errs      errorMap
	effects   *effectsLookup
	// brand is how the system is named to its customers (brand.go).
	brand adapter.Brand
	// defaultLocale and locales are the languages its quotes are written
	// in (locale.go).
	defaultLocale string
	locales       []string
	// endpoint is where a graphql file's operations are POSTed (graphql.go).
	endpoint string
}

var _ adapter.System = (*Adapter)(nil)

type principalLookup struct {
	path    *template
	items   string
	match   *expr
	contact *ContactDesc
	gql     *graphqlOp
}

type object struct {
	kind               string
	get, list, display *template
	idPattern          *regexp.Regexp
	items              string
	owner, terms       *expr
	exact              *expr
	idPtr, versionPtr  string
	paging             *paging
	getGQL, listGQL    *graphqlOp
	// identity and identityName, when the kind declares one, read the
	// object's business key (resolve.go).
	identity     *expr
	identityName string
}

type readTool struct {
	spec   adapter.ReadToolSpec
	object *object
	param  string
	list   *object
	path   *template
	items  string
	fields []string
	max    int
	// account: the tool reads the principal's own account.
	account bool
	paging  *paging
	gql     *graphqlOp
}

type namedExpr struct {
	name string
	expr *expr
}

type guard struct {
	require       *expr
	code          string
	message, hint *template
	field         string
	policy        bool
}

type request struct {
	method  string
	path    *template
	body    any
	hasBody bool
	// gql is the operation when the request is a GraphQL mutation; its
	// body is then the operation's {query, variables}.
	gql *graphqlOp
	// form, when not "", sends the body form-encoded in that style
	// (form.go).
	form formStyle
}

type lineTemplate struct {
	label, from, to *template
	emphasis, sum   bool
	when            *expr
}

type customerTemplate struct {
	title, reference, dateLabel, arrives *template
	date, items                          *expr
	why                                  []whyTemplate
}

type whyTemplate struct {
	text *template
	when *expr
}

type quoteTemplate struct {
	title, currency, confirm, decline *template
	amount                            *expr
	now                               bool
	lines                             []lineTemplate
	consequences, constraints         []*template
	customer                          *customerTemplate
	// done is the action's done words (ActionDesc.DoneWords), nil when
	// the file gives none.
	done *template
}

type verifyTemplate struct {
	path   *template
	items  string
	fields map[string]*expr
	// expect, optional, must hold of before, after and args; before holds
	// the target's fields of beforeRefs, kept in the quote's basis.
	expect     *expr
	beforeRefs [][]string
	// afterRefs are the read-back's fields expect reads, as JSON Pointers,
	// shown as observed.
	afterRefs []string
	gql       *graphqlOp
}

type evidence struct {
	match     *expr
	reference *template
}

type effectsLookup struct {
	path                        *template
	items, id, at, kind, object string
	// authoritative: no effect under a key settleAfter after the call
	// proves it was not applied.
	authoritative bool
	settleAfter   time.Duration
	// amount and currency are JSON Pointers into an effect; major says
	// the amount is in whole units.
	amount, currency string
	major            bool
	paging           *paging
	gql              *graphqlOp
}

type action struct {
	spec      adapter.ActionSpec
	target    *object
	vars      []namedExpr
	guards    []guard
	dryRun    *request
	quote     quoteTemplate
	request   *request
	reference *template
	// shortReference, optional, is the reference the customer reads.
	shortReference *template
	data           map[string]*template
	// amount and currency, optional, read the amount the system recorded.
	amount   *expr
	currency *template
	// amountMajor says amount is in whole units.
	amountMajor bool
	verify      verifyTemplate
	evidence    *evidence
	pre         *precondition
}

// precondition is a compiled PreconditionDesc.
type precondition struct {
	header, bodyField string
	value             *template
	refusal           errorRule
}

// Name is the system's name from its file.
func (a *Adapter) Name() string { return a.name }

// Title is the system's human name from its file.
func (a *Adapter) Title() string { return a.title }

// Actions lists the described write verbs.
func (a *Adapter) Actions() []adapter.ActionSpec {
	return a.writes().Specs()
}

// ReadTools lists the described read verbs.
func (a *Adapter) ReadTools() []adapter.ReadToolSpec {
	return adapter.Specs(a.reads, func(r *readTool) adapter.ReadToolSpec { return r.spec })
}

func (a *Adapter) now() time.Time { return a.clock().UTC() }

// SettleAfter is how long after a call the file's authoritative effects
// lookup takes no effect under its key as proof that the call was not
// applied; 0 when the lookup is not authoritative. The console refuses to
// start when it is not longer than its call timeout (a call still being
// sent would be settled).
func (a *Adapter) SettleAfter() time.Duration {
	if a.effects == nil || !a.effects.authoritative {
		return 0
	}
	return a.effects.settleAfter
}
