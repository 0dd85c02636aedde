package demoshop

import (
	"context"
	crand "crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"countersign/internal/tracing"
)

// Options configures a Shop. The zero value is usable.
type Options struct {
	// Now is the shop's clock; nil means time.Now. Seed dates and every
	// timestamp the shop writes come from it.
	Now func() time.Time
	// Logger receives one line per request; nil discards them.
	Logger *slog.Logger
	// Rand draws the error_rate and reset_rate faults; nil means a randomly
	// seeded source. Tests pass a seeded one to make draws repeatable.
	Rand *rand.Rand
	// Token is the credential every call must carry, as
	// "Authorization: Bearer <token>", like a real system's API key; a call
	// without it is a 401. Empty makes New generate a random one, which
	// Shop.Token returns to whoever connects the adapter.
	Token string
	// TestEndpoints serves /_faults, which makes the shop misbehave (tests,
	// the chaos campaign, benchmarks). Off, as in make run and cmd/demoshop
	// without -test-endpoints, it answers 404: nobody who reaches the shop
	// can break it. Go code holding the Shop can still call SetFault. The
	// read-only GET /_ledger is always served, behind the token like every
	// route: adapters reconcile through it, as through a real system's
	// request log.
	TestEndpoints bool
	// Tracing makes the shop a traced service: each call is a server span
	// continuing the caller's traceparent, named after its route, with the
	// shop's transaction and ledger write as its children
	// (tracing.ServiceFromEnv gives one exporting like the console). Nil
	// traces nothing.
	Tracing trace.TracerProvider
}

// Shop is the demo shop: a fake business system with its own storage in the
// PostgreSQL schema "shop", served over HTTP by Handler. Fault rules live in
// memory, so they are per Shop and do not survive a restart; data does.
type Shop struct {
	pool   *pgxpool.Pool
	clock  func() time.Time
	log    *slog.Logger
	faults *faultTable
	token  string
	tests  bool
	traces trace.TracerProvider
}

// New returns a Shop over pool. The pool's database must have been migrated
// with Migrate; New itself does no I/O.
func New(pool *pgxpool.Pool, opts Options) *Shop {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	if opts.Token == "" {
		opts.Token = newToken()
	}
	s := &Shop{pool: pool, clock: opts.Now, log: opts.Logger, token: opts.Token, tests: opts.TestEndpoints, traces: opts.Tracing}
	s.faults = newFaultTable(opts.Rand, s.routes())
	return s
}

// now is the shop's clock at PostgreSQL's precision, so that what is written
// reads back equal.
func (s *Shop) now() time.Time {
	return s.clock().UTC().Truncate(time.Microsecond)
}

// handlerFunc is a route handler; a returned error becomes the JSON error
// answer (an *apiError keeps its status, anything else is a 500).
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

type route struct {
	pattern string
	handle  handlerFunc
}

// routes is the shop's business API; faults apply to these routes only.
func (s *Shop) routes() []route {
	return []route{
		{"GET /customers", s.handleCustomerList},
		{"GET /customers/{id}", s.handleCustomerGet},
		{"GET /customers/{id}/subscriptions", s.handleCustomerSubscriptions},
		{"GET /customers/{id}/orders", s.handleCustomerOrders},
		{"GET /subscriptions/{id}", s.handleSubscriptionGet},
		{"PATCH /subscriptions/{id}", s.handleSubscriptionUpdate},
		{"GET /invoices", s.handleInvoiceList},
		{"GET /invoices/{id}", s.handleInvoiceGet},
		{"POST /invoices/{id}/void", s.handleInvoiceVoid},
		{"POST /invoices/{id}/send", s.handleInvoiceSend},
		{"GET /orders/{id}", s.handleOrderGet},
		{"PATCH /orders/{id}", s.handleOrderUpdate},
		{"GET /refunds", s.handleRefundList},
		{"POST /refunds", s.handleRefundCreate},
		{"GET /products", s.handleProductList},
		{"GET /products/{id}", s.handleProductGet},
		{"PATCH /products/{id}", s.handleProductUpdate},
		{"GET /inventory/{product_id}", s.handleInventoryGet},
	}
}

// controlRoutes inspect and steer the shop; faults never apply to them.
// The fault routes are served only with TestEndpoints.
func (s *Shop) controlRoutes() []route {
	routes := []route{
		{"GET /_ledger", s.handleLedgerList},
		{"/", func(http.ResponseWriter, *http.Request) error { return errUnknownRoute }},
	}
	if s.tests {
		routes = append(routes,
			route{"GET /_faults", s.handleFaultList},
			route{"POST /_faults", s.handleFaultSet},
			route{"DELETE /_faults", s.handleFaultClear})
	}
	return routes
}

// Handler returns the shop's HTTP API. Every route is documented in README.md.
// Every call must carry the shop's token (Token); with Options.Tracing
// every call is a server span.
func (s *Shop) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		mux.Handle(rt.pattern, s.serve(rt, true))
	}
	for _, rt := range s.controlRoutes() {
		mux.Handle(rt.pattern, s.serve(rt, false))
	}
	return tracing.Handler(s.traces, mux)
}

// Token is the credential every call must carry ("Authorization: Bearer
// <token>"): Options.Token, or the one New generated.
func (s *Shop) Token() string { return s.token }

// authorized says whether r carries the shop's token, compared in constant
// time.
func (s *Shop) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

// newToken makes a random shop token.
func newToken() string {
	b := make([]byte, 24)
	_, _ = crand.Read(b)
	return "shop_" + hex.EncodeToString(b)
}

// serve wraps one route: request id, faults, error answers and a log line.
func (s *Shop) serve(rt route, faultable bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if id == "" {
			id = newID("req_")
		}
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(withRequestID(r.Context(), id))
		trace.SpanFromContext(r.Context()).SetName(rt.pattern)
		sw := &statusWriter{ResponseWriter: w}
		var fault string
		if !s.authorized(r) {
			// Before any fault: a caller without the token learns nothing
			// and changes nothing.
			w.Header().Set("WWW-Authenticate", `Bearer realm="demoshop"`)
			s.writeError(sw, r, errUnauthenticated)
		} else if faultable {
			fault = s.serveWithFaults(sw, r, rt)
		} else {
			s.run(sw, r, rt.handle)
		}
		attrs := []slog.Attr{
			slog.String("route", rt.pattern),
			slog.String("path", r.URL.Path),
			slog.Int("status", sw.status),
			slog.Duration("took", time.Since(start)),
			slog.String("request_id", id),
		}
		if fault != "" {
			attrs = append(attrs, slog.String("fault", fault))
		}
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "demoshop request", attrs...)
	})
}

func (s *Shop) run(w http.ResponseWriter, r *http.Request, h handlerFunc) {
	if err := h(w, r); err != nil {
		s.writeError(w, r, err)
	}
}

func (s *Shop) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		s.log.ErrorContext(r.Context(), "demoshop request failed", slog.String("error", err.Error()))
		ae = &apiError{
			status:  http.StatusInternalServerError,
			typ:     errTypeAPI,
			code:    "internal_error",
			message: "An unexpected error occurred while processing your request.",
		}
	}
	writeJSON(w, ae.status, ae.body())
}

// statusWriter remembers the status for the log line; Unwrap lets
// http.ResponseController reach the connection to hijack it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// querier is what reads need: a pool or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}
