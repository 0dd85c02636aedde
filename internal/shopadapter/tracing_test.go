package shopadapter_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
	"countersign/internal/tracing"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestEveryCallToTheShopCarriesATrace: with tracing on, every request
// the adapter makes — resolving a target, a dry run, a send, its
// read-back, a lookup of its effect, a read tool, a contact — reaches a
// traced shop as a server span whose parent is the adapter's client span,
// though none of the calls was made inside a span of its own.
func TestEveryCallToTheShopCarriesATrace(t *testing.T) {
	console := tracetest.NewInMemoryExporter()
	tracing.Install(tracing.NewProvider(console, true))
	t.Cleanup(func() { tracing.Install(nil) })
	shopSpans := tracetest.NewInMemoryExporter()
	ctx := context.Background()
	pool := dbtest.NewBare(t)
	if err := demoshop.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := demoshop.Seed(ctx, pool, testNow); err != nil {
		t.Fatal(err)
	}
	shop := demoshop.New(pool, demoshop.Options{Now: clock, Rand: rand.New(rand.NewPCG(1, 2)), Token: shopToken,
		Tracing: tracing.NewProvider(shopSpans, true)})
	run, err := demoshop.Start(ctx, shop, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Close(context.Background()) })
	a := shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: run.URL, Token: shopToken,
		Ledger: adapter.NewLedger(store.New(dbtest.New(t)), clock), Now: func() time.Time { return testNow.Add(time.Hour) }})

	args := raw(t, refundLamp)
	q, err := a.DryRun(ctx, jordan, shopadapter.ActionIssueRefund, args)
	if err != nil {
		t.Fatal(err)
	}
	call := adapter.Call{Action: shopadapter.ActionIssueRefund, Args: args, IdempotencyKey: "key-1", Quote: q}
	res, err := a.Execute(ctx, jordan, call)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Verify(ctx, jordan, call, &res); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Lookup(ctx, jordan, call); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Read(ctx, jordan, "list_orders", raw(t, map[string]any{})); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Contact(ctx, jordan); err != nil {
		t.Fatal(err)
	}

	clients := map[trace.SpanID]bool{}
	for _, s := range console.GetSpans().Snapshots() {
		if s.SpanKind() == trace.SpanKindClient {
			clients[s.SpanContext().SpanID()] = true
		}
	}
	served := map[string]int{}
	for _, s := range shopSpans.GetSpans().Snapshots() {
		if s.SpanKind() != trace.SpanKindServer {
			continue
		}
		served[s.Name()]++
		if !clients[s.Parent().SpanID()] {
			t.Errorf("the shop served %s under %v, not under a client span of the adapter's", s.Name(), s.Parent())
		}
	}
	for _, route := range []string{"GET /customers", "GET /orders/{id}", "POST /refunds", "GET /refunds", "GET /_ledger", "GET /customers/{id}/orders"} {
		if served[route] == 0 {
			t.Errorf("no traced %s among %v", route, served)
		}
	}
}
