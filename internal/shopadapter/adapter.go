package shopadapter

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/locale"
	"countersign/internal/tracing"
)

// Config configures an Adapter.
type Config struct {
	// Name is the system's name in this installation, e.g. "shop" or
	// "shop-eu"; every target carries it. Default "shop".
	Name string
	// BaseURL is the shop's URL, e.g. "http://127.0.0.1:8090".
	BaseURL string
	// Token is the shop's credential, sent on every request as
	// "Authorization: Bearer <token>" (demoshop.Shop.Token; SHOP_TOKEN).
	// Without the right one the shop answers 401 to everything.
	Token string
	// HTTPClient sends the requests; nil means a client with a 10 s timeout.
	HTTPClient *http.Client
	// Ledger is the request ledger. Execute needs it to send anything, and
	// cancel_subscription's one-per-day limit reads it.
	Ledger *adapter.Ledger
	// Now is the adapter's clock for policy windows and quote dates; nil
	// means time.Now.
	Now func() time.Time
	// Logger receives what cannot be returned, such as a ledger write that
	// failed after the shop applied a change; nil discards it.
	Logger *slog.Logger
	// Brand is how the shop is named to its customers; DemoBrand, the
	// bundled demo shop's, fills what it leaves empty: a Brand with only a
	// Locale is the demo shop writing to its customers in that language
	// by default.
	Brand adapter.Brand
	// Catalogue holds the shop.* messages quotes are written from; nil
	// means locale.Installed() (the shipped files and an installation's).
	// Quotes are written in English and carried in every other language
	// the catalogue holds, so a catalogue with a language added (a
	// shop.<tag>.json file) translates them too.
	Catalogue *locale.Catalogue
	// SettleAfter is how long after a call was begun its absence from the
	// shop's ledger proves it was not applied (Lookup's NotApplied); zero
	// means DefaultSettleAfter. It must be longer than any copy of the
	// request can take to commit: the console's adapter timeout, since
	// the shop gives up on a request whose caller went away.
	SettleAfter time.Duration
}

// DefaultSettleAfter is Config.SettleAfter's default: four times the
// console's default adapter timeout.
const DefaultSettleAfter = time.Minute

// DemoBrand is the bundled demo shop as its customers know it: a
// homeware shop in Oakland, California.
var DemoBrand = adapter.Brand{Name: "Harbour & Pine", Zone: mustZone("America/Los_Angeles")}

func mustZone(name string) *time.Location {
	loc, err := adapter.LoadZone(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// Adapter is the demo shop as an adapter.System. It holds no state of its
// own beyond its configuration and is safe for concurrent use.
type Adapter struct {
	name    string
	shop    *client
	ledger  *adapter.Ledger
	clock   func() time.Time
	log     *slog.Logger
	actions []actionDef
	reads   []readDef
	brand   adapter.Brand
	texts   *locale.Catalogue
	// settleAfter: the shop's ledger is authoritative (Lookup).
	settleAfter time.Duration
}

var (
	_ adapter.System  = (*Adapter)(nil)
	_ adapter.Branded = (*Adapter)(nil)
)

// Brand is how the shop is named to its customers (Config.Brand).
func (a *Adapter) Brand() adapter.Brand { return a.brand }

// New builds an adapter for the shop at cfg.BaseURL. It does no I/O; an
// unreachable shop shows up as system_unreachable errors on use.
func New(cfg Config) *Adapter {
	if cfg.Name == "" {
		cfg.Name = "shop"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	// Every request carries the traceparent of the write it is part of,
	// and no redirect is followed (adapter.NoRedirects).
	traced := adapter.NoRedirects(cfg.HTTPClient)
	traced.Transport = tracing.Transport(traced.Transport)
	cfg.HTTPClient = traced
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Brand.Name == "" {
		cfg.Brand.Name = DemoBrand.Name
	}
	if cfg.Brand.Zone == nil {
		cfg.Brand.Zone = DemoBrand.Zone
	}
	if cfg.Catalogue == nil {
		cfg.Catalogue = locale.Installed()
	}
	if cfg.SettleAfter <= 0 {
		cfg.SettleAfter = DefaultSettleAfter
	}
	return &Adapter{
		brand:   cfg.Brand,
		name:    cfg.Name,
		shop:    &client{base: strings.TrimRight(cfg.BaseURL, "/"), token: cfg.Token, http: cfg.HTTPClient},
		ledger:  cfg.Ledger,
		clock:   cfg.Now,
		log:     cfg.Logger,
		actions: actionDefs(),
		reads:   readDefs(),
		texts:   cfg.Catalogue,

		settleAfter: cfg.SettleAfter,
	}
}

// Name is the system's name, e.g. "shop-eu".
func (a *Adapter) Name() string { return a.name }

// Actions lists the shop's write verbs with their contracts and guidance.
func (a *Adapter) Actions() []adapter.ActionSpec {
	return a.writes().Specs()
}

// ReadTools lists the shop's read verbs.
func (a *Adapter) ReadTools() []adapter.ReadToolSpec {
	return adapter.Specs(a.reads, func(d readDef) adapter.ReadToolSpec { return d.spec })
}

func (a *Adapter) now() time.Time { return a.clock().UTC() }

// plan is a fully validated action: the quote a person confirms, and the
// request(s) that carry it out.
type plan struct {
	quote adapter.Quote
	send  func(ctx context.Context, key string) (adapter.Result, error)
}

// action finds an action and validates raw arguments against its spec.
func (a *Adapter) action(name string, raw json.RawMessage) (actionDef, map[string]any, error) {
	return a.writes().Find(name, raw)
}

// writes is the shop's actions with the adapter kit around them: a failed
// workflow's steps are kept in the ledger, and every result gets the short
// reference a customer reads out.
func (a *Adapter) writes() adapter.Writes[actionDef] {
	return adapter.Writes[actionDef]{
		Planner: adapter.Planner{System: a.name, Ledger: a.ledger, Log: a.log, NeedVersion: true,
			KeepFailed: func(res adapter.Result) bool { return len(res.Steps) > 0 }},
		Defs: a.actions,
		Spec: func(d actionDef) adapter.ActionSpec { return d.spec },
		Plan: func(ctx context.Context, d actionDef, p adapter.Principal, vals map[string]any) (adapter.Plan, error) {
			pl, err := d.plan(a, ctx, p, vals)
			if err != nil {
				return adapter.Plan{}, err
			}
			a.withDoneWords(d.spec.Name, &pl.quote)
			return adapter.Plan{Quote: pl.quote, Send: func(ctx context.Context, key string) (adapter.Result, error) {
				res, err := pl.send(ctx, key)
				withShortReference(&res)
				return res, err
			}}, nil
		},
	}
}

// DryRun validates action completely, reading the shop but changing
// nothing, and returns the quote. Refusals are *adapter.Error with Outcome
// Refused; a shop that cannot be read gives system_unreachable (NotSent).
func (a *Adapter) DryRun(ctx context.Context, p adapter.Principal, action string, args json.RawMessage) (adapter.Quote, error) {
	return a.writes().DryRun(ctx, p, action, args)
}

// Execute carries out a confirmed call once per idempotency key. A key seen
// before sends nothing and answers the first call's result (Deduplicated)
// or error. Otherwise it plans again from fresh reads (every check of the
// dry run applies), refuses with target_changed when the target's version
// differs from call.Quote's, claims the key in the ledger, sends, and
// records the outcome. call.Quote must be the confirmed dry-run quote.
func (a *Adapter) Execute(ctx context.Context, p adapter.Principal, call adapter.Call) (adapter.Result, error) {
	return a.writes().Execute(ctx, p, call)
}

// withShortReference adds the reference a customer reads out: "#" and the
// last six characters of the shop's reference ("#85380F"); staff keep the
// whole reference. It carries no word: it is stored once with the result
// and shown as it is to a customer in any language, and given to the
// assistant (say), so both name the change alike.
func withShortReference(res *adapter.Result) {
	if res == nil || res.Reference == "" {
		return
	}
	res.ShortReference = "#" + shortID(res.Reference)
}

// isCode reports whether err is an *adapter.Error with code.
func isCode(err error, code string) bool {
	ae, ok := adapter.AsError(err)
	return ok && ae.Code == code
}
