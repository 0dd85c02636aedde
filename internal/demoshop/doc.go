// Package demoshop is the bundled demo shop: a fake business system that
// Countersign's adapter talks to in demos and tests. It behaves like a real
// commerce backend built for a web frontend, not for an agent:
//
//   - frontend-shaped writes: PATCH /subscriptions/{id} with a body, a
//     non-idempotent POST /refunds, PATCH /products/{id} that changes any field;
//   - provider-style errors, {"error":{"type","code","message",...}}, such as
//     402 card_error/card_declined on an immediate cancellation whose balance
//     the card cannot pay;
//   - internal fields in every answer (risk_score, margin_cents,
//     internal_notes, fraud_flag, processor_*_id) that an adapter must strip;
//   - a read-only ledger of every effect applied (GET /_ledger), written in the
//     effect's own transaction, keyed by the caller's X-Request-Id;
//   - fault injection per route (POST /_faults): latency, 5xx, connection
//     reset, commit-then-drop-the-answer and answer-without-applying.
//
// Data lives in the PostgreSQL schema "shop", created by Migrate and filled
// once by Seed; New builds a Shop over a pool, Handler serves it and Start runs
// it on a port. Fixture helpers (CreateCustomer, CreateSubscription,
// CreateInvoice, CreateProduct, CreateOrder, CreateRefund) insert data
// directly for tests of other packages. README.md documents every route.
package demoshop
