package webtest

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/trace"

	"countersign/internal/confirmation"
	"countersign/internal/safehttp"
	"countersign/internal/sso"
	"countersign/web/kit"
)

// Option changes how New (or Assemble, or Stack.ServeAnother) assembles
// the console.
type Option func(*config)

// WithTrustedProxies has the server believe X-Forwarded-For from these
// addresses.
func WithTrustedProxies(p ...netip.Prefix) Option {
	return func(o *config) { o.trustedProxies = p }
}

// WithShop connects a seeded demo shop (system "shop") over real HTTP.
func WithShop() Option { return func(o *config) { o.shop = true } }

// WithShopLocale gives the demo shop's brand a default language (the
// system's default, customer_brand.locale in a description file).
func WithShopLocale(tag string) Option { return func(o *config) { o.shopLocale = tag } }

// WithShopTracing makes the demo shop a traced service exporting its spans
// through tp (demoshop.Options.Tracing).
func WithShopTracing(tp trace.TracerProvider) Option {
	return func(o *config) { o.shopTracing = tp }
}

// WithOfflineShop connects system "shop" at an address where nothing
// answers, with the default policies (owned by nobody): the pages show its
// actions and stored quotes, and nothing is sent to a shop. For benchmarks
// of pages over seeded rows.
func WithOfflineShop() Option { return func(o *config) { o.offlineShop = true } }

// WithSlack connects the console to a fake Slack (the stack's Slack).
func WithSlack() Option { return func(o *config) { o.slack = true } }

// WithLogger sends the console's log to l.
func WithLogger(l *slog.Logger) Option { return func(o *config) { o.logger = l } }

// WithQueryTracer shows tr every SQL statement the console sends (New
// only: Assemble is given its store).
func WithQueryTracer(tr pgx.QueryTracer) Option { return func(o *config) { o.queries = tr } }

// WithLogo makes logo (a TLS server) the shop's logo server: the shop's
// brand names its /logo.png and the console fetches it with its client.
func WithLogo(logo *httptest.Server) Option { return func(o *config) { o.logo = logo } }

// WithLogoURL is the shop's logo address instead of the logo server's
// /logo.png; "{logo}" in it stands for the logo server's address.
func WithLogoURL(u string) Option { return func(o *config) { o.logoURL = u } }

// WithProofs says how customers prove who they are, per system (without
// it: confirmation.DefaultProofs, the mail link and the account,
// everywhere).
func WithProofs(p map[string][]confirmation.Proof) Option {
	return func(o *config) { o.proofs = p }
}

// WithTypedCodes turns typed codes on for the shop, beside the customer's
// account: for the tests of codes, which a business must turn on (a code
// can be read out to whoever asks for it).
func WithTypedCodes() Option {
	return WithProofs(map[string][]confirmation.Proof{"shop": {confirmation.ProofCode, confirmation.ProofAccount}})
}

// WithAssertionSecrets gives each system's secret for its assertions.
func WithAssertionSecrets(s map[string][]byte) Option {
	return func(o *config) { o.assertionSecrets = s }
}

// WithAssistant adds the assistant "support-bot" with every action on and
// a live key, and its open task for Jordan Lee (needs WithShop).
func WithAssistant() Option { return func(o *config) { o.assistant = true } }

// WithCustomerStage has the manager put the shop's customer actions on
// stage 4, where the customer confirms (needs WithShop).
func WithCustomerStage() Option { return func(o *config) { o.customerStage = true } }

// WithNow is the console's clock instead of the test clock (Stack.Clock is
// then nil; Stack.Now is now): time.Now for a console that runs in real
// time beside a dispatcher or over rows seeded relative to the wall clock.
func WithNow(now func() time.Time) Option { return func(o *config) { o.now = now } }

// WithSessionKeys are the session keys, the current pair first, instead of
// SessionKeys (as after a key rotation).
func WithSessionKeys(keys ...[]byte) Option { return func(o *config) { o.keyPairs = keys } }

// WithSessionLifetime is how long a session lives unused (idle) and at
// most (absolute), instead of 30 minutes and 12 hours.
func WithSessionLifetime(idle, absolute time.Duration) Option {
	return func(o *config) { o.idle, o.absolute = idle, absolute }
}

// WithTelemetry has the console count and time every request in tel.
func WithTelemetry(tel *kit.Telemetry) Option { return func(o *config) { o.telemetry = tel } }

// WithAPIRate is each API key's rate (and burst) a minute on the API and
// the MCP server instead of the console's default.
func WithAPIRate(perMinute int) Option { return func(o *config) { o.apiRate = perMinute } }

// config is what the options set.
type config struct {
	trustedProxies []netip.Prefix
	// keyPairs are the session keys (nil: SessionKeys); idle and absolute
	// the sessions' lifetimes (zero: 30 minutes and 12 hours).
	keyPairs       [][]byte
	idle, absolute time.Duration
	// shop connects a seeded demo shop (system "shop") over real HTTP;
	// offlineShop one where nothing answers.
	shop, offlineShop bool
	// shopLocale is the shop's default language (WithShopLocale).
	shopLocale string
	// shopTracing makes the shop a traced service (WithShopTracing).
	shopTracing trace.TracerProvider
	// slack connects the console to a fake Slack (Stack.Slack).
	slack bool
	// proofs and assertionSecrets configure how customers prove who they
	// are (nil: code and account everywhere).
	proofs           map[string][]confirmation.Proof
	assertionSecrets map[string][]byte
	// logger receives the console's log (nil: discarded).
	logger *slog.Logger
	// queries, when set, sees every SQL statement the console sends.
	queries pgx.QueryTracer
	// logo, when set, is the shop's logo server (TLS): the shop's brand
	// names its /logo.png and the console fetches it with its client.
	logo *httptest.Server
	// logoURL, when set, is the shop's logo address instead of the logo
	// server's /logo.png; "{logo}" in it stands for the server's address.
	logoURL string
	// assistant and customerStage are set by WithAssistant and
	// WithCustomerStage.
	assistant     bool
	customerStage bool
	// now is the clock (nil: a test clock at 2026-04-01 09:00 UTC).
	now func() time.Time
	// telemetry and apiRate go to the server as they are.
	telemetry *kit.Telemetry
	apiRate   int
	// sso builds the OpenID provider's client for a console served at the
	// given address (nil: single sign-on off); staffPasswordsOff is
	// -password-sign-in=false.
	sso               func(consoleURL string) *sso.Provider
	staffPasswordsOff bool
	// passkeys serves the console at http://localhost:<port> with passkeys
	// on (its relying party is localhost).
	passkeys bool
	// clientFetch is how the authorization server fetches client
	// metadata documents (WithClientDocuments).
	clientFetch safehttp.Options
	// pseudo renders the customer's pages in the pseudo-locale.
	pseudo bool
}

// WithClientDocuments lets the authorization server fetch OAuth clients'
// metadata documents from srv (a TLS server), trusting its certificate;
// every other address is refused as in production.
func WithClientDocuments(srv *httptest.Server) Option {
	return func(o *config) {
		o.clientFetch = safehttp.Options{Timeout: 2 * time.Second, Test: &safehttp.TestAllowance{
			Addrs: []string{srv.Listener.Addr().String()}, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}}
	}
}

// WithSSO turns single sign-on on (Stack.ServeAnother only): provider
// builds the console's client of the OpenID provider, given the address the
// console is served at (its redirect URL is that + "/sign-in/sso/callback").
func WithSSO(provider func(consoleURL string) *sso.Provider) Option {
	return func(o *config) { o.sso = provider }
}

// WithPasskeys turns passkeys on (Stack.ServeAnother only): the console's
// public URL is http://localhost:<its port>, so its relying party is
// "localhost" (browsers take no IP address as one); browse it there.
func WithPasskeys() Option { return func(o *config) { o.passkeys = true } }

// WithPseudoLocale renders every customer page in the pseudo-locale
// (locale.Pseudo) from a catalogue loaded WithPseudo, whatever the
// customer chose: what pseudotest.Strays then finds was not taken from a
// catalogue. Stack.ServeAnother takes it too.
func WithPseudoLocale() Option { return func(o *config) { o.pseudo = true } }

// WithoutStaffPasswords refuses password sign-in to staff, as
// -password-sign-in=false does.
func WithoutStaffPasswords() Option { return func(o *config) { o.staffPasswordsOff = true } }

// options applies opts to a zero config.
func options(opts []Option) config {
	var o config
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// needsUsers names the first option set that needs New's users, if any.
func (o config) needsUsers() string {
	switch {
	case o.shop:
		return "WithShop"
	case o.assistant:
		return "WithAssistant"
	case o.customerStage:
		return "WithCustomerStage"
	case o.queries != nil:
		return "WithQueryTracer"
	}
	return ""
}

// changesServices names the first option set that changes the services a
// stack is built from rather than its server, if any.
func (o config) changesServices() string {
	if s := o.needsUsers(); s != "" {
		return s
	}
	switch {
	case o.offlineShop:
		return "WithOfflineShop"
	case o.slack:
		return "WithSlack"
	case o.now != nil:
		return "WithNow"
	case o.proofs != nil:
		return "WithProofs"
	case o.assertionSecrets != nil:
		return "WithAssertionSecrets"
	}
	return ""
}
