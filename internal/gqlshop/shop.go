// Package gqlshop is a small shop that speaks GraphQL, served by a real
// GraphQL server (github.com/graph-gophers/graphql-go): customers, orders
// and refunds made once per idempotency key, kept in memory. It is the
// GraphQL system the description-file adapter is tested against
// (internal/httpadapter/testdata/example/graphql-shop.json), and can be a
// second system for the chaos campaign: it plays the faults of a network
// and a failing system on its next mutation.
package gqlshop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graph-gophers/graphql-go"
	"github.com/graph-gophers/graphql-go/relay"
	"go.opentelemetry.io/otel/trace"
)

// Fault is a failure the shop plays on its next mutation.
type Fault string

// The faults, as the adapter conformance suite names them.
const (
	// FaultServerError answers 503 without running the mutation.
	FaultServerError Fault = "server_error"
	// FaultReset reads the request and hangs up without running it.
	FaultReset Fault = "reset"
	// FaultDropAfterCommit runs the mutation, then hangs up unanswered.
	FaultDropAfterCommit Fault = "drop_after_commit"
)

// Shop is the GraphQL shop; it is an http.Handler of POST /graphql that
// requires the bearer token Token. It is safe for concurrent use.
type Shop struct {
	token  string
	now    func() time.Time
	schema *graphql.Schema

	mu              sync.Mutex
	customers       []*Customer
	orders          []*Order
	refunds         []*Refund
	fault           Fault
	failAfterCommit bool
	// pages counts the pages of orders answered, for tests of paging.
	pages atomic.Int64
}

// New makes the shop with the seed records, its clock at now.
func New(token string, now func() time.Time) *Shop {
	s := &Shop{token: token, now: now}
	s.schema = graphql.MustParseSchema(Schema, &resolver{s: s}, graphql.UseFieldResolvers())
	s.seed()
	return s
}

// The seed: Ada has five orders (three pages of two), two of them lamps
// and one cancelled; Bob has one.
func (s *Shop) seed() {
	s.customers = []*Customer{
		{ID: "cus_ada", Email: "ada@example.com", Name: "Ada Lovelace"},
		{ID: "cus_bob", Email: "bob@example.com", Name: "Bob Marley"},
	}
	order := func(id, number, customer, title, status string, total int32) *Order {
		return &Order{ID: graphql.ID(id), Number: number, CustomerID: graphql.ID(customer), Title: title, Status: status,
			TotalCents: total, Currency: "EUR", Version: 1}
	}
	s.orders = []*Order{
		order("ord_1", "1001", "cus_ada", "Walnut desk lamp", "paid", 8400),
		order("ord_2", "1002", "cus_ada", "Brass floor lamp", "paid", 12900),
		order("ord_3", "1003", "cus_ada", "Linen cushion", "paid", 3900),
		order("ord_4", "1004", "cus_ada", "Oak bookend", "cancelled", 4200),
		order("ord_5", "1005", "cus_ada", "Wool blanket", "paid", 9900),
		order("ord_6", "2001", "cus_bob", "Desk mat", "paid", 2500),
	}
}

// CreateCustomer adds a customer and returns its id (cus_N).
func (s *Shop) CreateCustomer(email, name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Customer{ID: graphql.ID(fmt.Sprintf("cus_%d", len(s.customers)+1)), Email: email, Name: name}
	s.customers = append(s.customers, c)
	return string(c.ID)
}

// CreateOrder adds a paid order of totalCents (in currency, e.g. "EUR")
// for customer and returns its id (ord_N): a fresh target for one refund.
func (s *Shop) CreateOrder(customer, title string, totalCents int32, currency string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.orders) + 1
	o := &Order{ID: graphql.ID(fmt.Sprintf("ord_%d", n)), Number: fmt.Sprint(3000 + n), CustomerID: graphql.ID(customer), Title: title,
		Status: "paid", TotalCents: totalCents, Currency: currency, Version: 1}
	s.orders = append(s.orders, o)
	return string(o.ID)
}

// Token is the bearer token the shop requires.
func (s *Shop) Token() string { return s.token }

// Fault makes the next mutation fail as f.
func (s *Shop) Fault(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = f
}

// FailAfterCommit makes the next refund be recorded and then answered
// with a GraphQL error (errors[] with "data"), as a resolver that fails
// after its write does.
func (s *Shop) FailAfterCommit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAfterCommit = true
}

// Refunds counts the refunds recorded under key, or all when key is "".
func (s *Shop) Refunds(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.refunds {
		if key == "" || r.IdempotencyKey == key {
			n++
		}
	}
	return n
}

// OrderPages counts the pages of orders the shop has answered.
func (s *Shop) OrderPages() int64 { return s.pages.Load() }

func (s *Shop) order(id graphql.ID) *Order {
	for _, o := range s.orders {
		if o.ID == id {
			return o
		}
	}
	return nil
}

// ServeHTTP answers POST /graphql with a bearer token; the next mutation
// plays the armed fault.
func (s *Shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/graphql" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.token {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]any{"errors": []any{map[string]any{"message": "Unauthorized",
			"extensions": map[string]any{"code": "UNAUTHENTICATED"}}}})
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	var fault Fault
	// Named for a trace when it is traced (tracing.Handler).
	trace.SpanFromContext(r.Context()).SetName("graphql query")
	if isMutation(raw) {
		trace.SpanFromContext(r.Context()).SetName("graphql mutation")
		s.mu.Lock()
		fault, s.fault = s.fault, ""
		s.mu.Unlock()
	}
	switch fault {
	case FaultServerError:
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	case FaultReset:
		hangUp(w)
		return
	case FaultDropAfterCommit:
		(&relay.Handler{Schema: s.schema}).ServeHTTP(discard{}, r)
		hangUp(w)
		return
	}
	(&relay.Handler{Schema: s.schema}).ServeHTTP(w, r)
}

// isMutation says whether the request's query is a mutation.
func isMutation(raw []byte) bool {
	var body struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(raw, &body)
	return strings.HasPrefix(strings.TrimSpace(body.Query), "mutation")
}

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("gqlshop: the connection cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		conn.Close()
	}
}

// discard is a ResponseWriter that keeps nothing: the answer of a
// mutation whose answer is dropped.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
