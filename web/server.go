// Package web assembles the console's HTTP side: one Echo server whose
// route table is the concatenation of each audience's routes (the
// assistant's API in web/api, the customer's pages in web/customer, the
// staff console in web/console), each with the roles allowed on it; the
// shared middleware of web/kit in front; the header's navigation drawn from
// the same table; and a single error handler that renders an error page
// (or JSON under /api/).
package web

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/assistants"
	"countersign/internal/audit"
	"countersign/internal/authserver"
	"countersign/internal/controlplane"
	"countersign/internal/custkeys"
	"countersign/internal/factors"
	"countersign/internal/handoffs"
	"countersign/internal/lists"
	"countersign/internal/locale"
	"countersign/internal/metrics"
	"countersign/internal/receipts"
	"countersign/internal/safehttp"
	"countersign/internal/slackbot"
	"countersign/internal/sso"
	"countersign/internal/webhooks"
	"countersign/web/api"
	"countersign/web/console"
	"countersign/web/customer"
	"countersign/web/kit"
	"countersign/web/layout"
	"countersign/web/slackhook"
	"countersign/web/trail"
)

// Config is what the server needs from the outside world. The wiring
// builds every service; the server builds none of its own.
type Config struct {
	// Database answers the readiness probe.
	Database Database
	Accounts *accounts.Service
	Sessions *kit.SessionStore
	Registry *adapter.Registry
	Control  *controlplane.Service
	// Handoffs is what the console's people do with the assistants'
	// hand-offs (over Control).
	Handoffs *handoffs.Service
	// Lists reads the console's lists and counts: the task list, the
	// hand-offs, the queue and its badge, the home pages' waiting work and
	// a customer's requests.
	Lists *lists.Service
	// Confirmations makes the link that shows a customer an invocation
	// awaiting their confirmation and checks their proof of who they are;
	// nil leaves links out (customers then decide signed in).
	Confirmations customer.ConfirmationLinks
	// Assistants authenticates API keys and keeps the assistants' catalog;
	// nil turns the API and the MCP server away (every key is refused).
	Assistants *assistants.Service
	// Metrics answers the manager's metrics pages.
	Metrics *metrics.Reports
	// Webhooks registers assistants' outcome endpoints and lists and resends
	// their deliveries; nil leaves outcome webhooks off the admin page.
	Webhooks *webhooks.Service
	// APIRatePerMinute is each API key's request rate (and burst) on the
	// API and the MCP server; zero means 120.
	APIRatePerMinute int
	// MCPAllowedOrigins are the browser origins that may call /mcp besides
	// a page of the console's own address by IP or localhost.
	MCPAllowedOrigins []string
	// Receipts signs the receipts of completed writes (nil: a key of this
	// process's own).
	Receipts *receipts.Signer
	// PublicBase is the console's configured address, for what it signs.
	PublicBase string
	Logger     *slog.Logger
	// TrustedProxies may set X-Forwarded-For; with none, the client address
	// is the TCP peer's, whatever headers say.
	TrustedProxies []netip.Prefix
	// TLS says the console is served over HTTPS (directly or by a proxy that
	// terminates TLS), which turns on HSTS.
	TLS bool
	// Now is the clock; tests pass a fake one.
	Now func() time.Time
	// Telemetry, when set, counts and times every request for Prometheus.
	Telemetry *kit.Telemetry
	// Factors, when set, asks a second factor after the password of a
	// person who has one or whose role requires one, and lets people set
	// up authenticator apps; nil leaves password sign-in alone.
	Factors *factors.Service
	// Slack, when set, answers the clicks on the cards' messages in Slack
	// and links people's Slack accounts on their account page; nil leaves
	// Slack off (its address answers 404).
	Slack *slackbot.Bot
	// SSO signs staff in through the business's OpenID provider; nil
	// leaves single sign-on off.
	SSO *sso.Provider
	// StaffPasswordsOff refuses password sign-in to staff
	// (-password-sign-in=false).
	StaffPasswordsOff bool
	// CustomerPasskeys registers returning customers' passkeys and checks
	// their decisions; nil (or off: no public URL) offers none.
	CustomerPasskeys *custkeys.Service
	// AuthServer, when set, makes the console the OAuth 2.1 authorization
	// server of its MCP server: hosted clients connect with a person's
	// consent (web/api/oauth.go, web/console/oauth_consent.go); nil leaves
	// /mcp to API keys alone.
	AuthServer *authserver.Service
	// LogoFetch is how the businesses' logos the customer pages show are
	// fetched: the zero value in production (safehttp: public https
	// addresses only); tests set its Test allowance, never a flag.
	LogoFetch safehttp.Options
	// CustomerCatalogue is the messages the customer's pages are written
	// from (nil: the shipped catalogue); CustomerPseudo renders every one
	// in the pseudo-locale, for the tests that find text not taken from a
	// catalogue (customer.Config's Catalogue and Pseudo).
	CustomerCatalogue *locale.Catalogue
	CustomerPseudo    bool
	// Audit signs checkpoints of the trail and answers its proofs (public
	// under /audit, web/trail) and the admin's exports; nil signs none.
	Audit *audit.Log
}

// Server is the assembled console.
type Server struct {
	cfg    Config
	log    *slog.Logger
	echo   *echo.Echo
	access map[string]kit.Access // "METHOD path" → who may use it
	frame  *layout.Frame
	api    *api.Handler
	// console draws the queue badge of the header's navigation.
	console *console.Handler
	// customer decides the customer's language for the error pages of
	// its routes ("METHOD path" in customerRoutes) refused before their
	// handler ran.
	customer       *customer.Handler
	customerRoutes map[string]bool
}

// New builds the server and registers every route.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	site := &kit.Site{Log: cfg.Logger, Now: cfg.Now, Accounts: cfg.Accounts, Sessions: cfg.Sessions, TLS: cfg.TLS,
		CheckedHeaders: api.CheckedHeaders, Signed: map[string]bool{}}
	s := &Server{cfg: cfg, log: cfg.Logger, access: map[string]kit.Access{}, customerRoutes: map[string]bool{}}
	s.frame = &layout.Frame{Site: site, Nav: s.navFor}
	s.api = api.New(site, api.Config{Registry: cfg.Registry, Control: cfg.Control, Confirmations: cfg.Confirmations,
		Assistants: cfg.Assistants, RatePerMinute: cfg.APIRatePerMinute, AllowedOrigins: cfg.MCPAllowedOrigins, Receipts: cfg.Receipts, PublicBase: cfg.PublicBase,
		AuthServer: cfg.AuthServer, Audit: cfg.Audit})
	cust := customer.New(s.frame, customer.Config{Control: cfg.Control, Lists: cfg.Lists, Confirmations: cfg.Confirmations,
		Registry: cfg.Registry, Receipt: s.api.Receipt, PublicBase: cfg.PublicBase, LogoFetch: cfg.LogoFetch,
		Passkeys: cfg.CustomerPasskeys, Catalogue: cfg.CustomerCatalogue, Pseudo: cfg.CustomerPseudo})
	s.customer = cust
	custRoutes := cust.Routes()
	for _, r := range custRoutes {
		s.customerRoutes[r.Method+" "+r.Path] = true
	}
	s.console = console.New(s.frame, console.Config{Registry: cfg.Registry, Control: cfg.Control, Handoffs: cfg.Handoffs, Lists: cfg.Lists,
		Assistants: cfg.Assistants, Metrics: cfg.Metrics, Webhooks: cfg.Webhooks, Slack: slackLinks(cfg.Slack),
		CustomerFrame: cust.CustomerFrame, SSO: cfg.SSO, StaffPasswordsOff: cfg.StaffPasswordsOff, Factors: cfg.Factors,
		AuthServer: cfg.AuthServer, PublicBase: cfg.PublicBase, Audit: cfg.Audit})

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.IPExtractor = ipExtractor(cfg.TrustedProxies)
	e.HTTPErrorHandler = s.handleError
	if cfg.Telemetry != nil {
		e.Use(cfg.Telemetry.Middleware)
	}
	// Bodies are bounded and hostile text refused before the session is
	// loaded or the CSRF check parses a form.
	e.Use(site.WithRequestContext, site.LogRequests, site.SecurityHeaders, site.RecoverPanics, site.Compress,
		site.LimitBody, site.RejectBadText, site.LoadSession, site.HoldForFactor, site.CheckCSRF)
	hook := slackhook.New(site, cfg.Slack)
	for _, r := range slices.Concat(s.routes(), s.console.Routes(), custRoutes, s.api.Routes(), hook.Routes(), trail.New(cfg.Audit).Routes()) {
		key := r.Method + " " + r.Path
		if _, dup := s.access[key]; dup {
			panic("web: route registered twice: " + key)
		}
		s.access[key] = r.Allow
		if r.Allow.Signed {
			site.Signed[key] = true
		}
		auth := site.Authorize(r.Allow)
		if r.Allow.Bearer {
			auth = s.api.Authorize
		}
		e.Add(r.Method, r.Path, r.Handler, auth)
	}
	s.echo = e
	return s
}

// slackLinks is the bot as the console's account page needs it, or nil
// (an interface holding a nil *Bot is not nil).
func slackLinks(b *slackbot.Bot) console.SlackLinks {
	if b == nil {
		return nil
	}
	return b
}

// BearerRoute reports whether a registered route takes an assistant's API
// key, for the role-matrix test.
func (s *Server) BearerRoute(method, path string) bool { return s.access[method+" "+path].Bearer }

// Handler is the server as an http.Handler.
func (s *Server) Handler() http.Handler { return s.echo }

// Registry is the set of connected systems the server shows.
func (s *Server) Registry() *adapter.Registry { return s.cfg.Registry }

// Control is the control plane the server drives.
func (s *Server) Control() *controlplane.Service { return s.cfg.Control }

// Echo exposes the router, for tests that enumerate the routes.
func (s *Server) Echo() *echo.Echo { return s.echo }

// AccessRule says who may use a registered route, for the role-matrix test;
// ok is false for a route registered outside the table.
func (s *Server) AccessRule(method, path string) (roles []accounts.Role, public bool, ok bool) {
	a, ok := s.access[method+" "+path]
	return a.Roles, a.Public, ok
}

// WebhookRender renders an invocation for an outcome webhook's body exactly
// as the API shows it (see api.Handler.WebhookRender).
func (s *Server) WebhookRender(base string) webhooks.Render { return s.api.WebhookRender(base) }

// Serve runs the server on addr (HTTPS when certFile is set) until ctx ends,
// then shuts down gracefully, letting requests in flight finish for up to
// grace.
func (s *Server) Serve(ctx context.Context, addr string, grace time.Duration, certFile, keyFile string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.ServeOn(ctx, ln, grace, certFile, keyFile)
}

// ServeOn is Serve on a listener the caller opened (and ServeOn closes):
// connections made to it before ServeOn runs wait in its backlog.
func (s *Server) ServeOn(ctx context.Context, ln net.Listener, grace time.Duration, certFile, keyFile string) error {
	srv := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	if s.cfg.Control != nil {
		// Long polls (?wait=, wait_for_outcome) answer with the state as it
		// is, instead of holding the shutdown until its grace runs out.
		srv.RegisterOnShutdown(s.cfg.Control.ReleaseWaits)
	}
	errc := make(chan error, 1)
	go func() {
		if certFile != "" {
			errc <- srv.ServeTLS(ln, certFile, keyFile)
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down HTTP server", "grace", grace)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

func ipExtractor(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		opts = append(opts, echo.TrustIPRange(prefixToIPNet(p)))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

func prefixToIPNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}
