package demoshop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"countersign/internal/tracing"
)

// Ledger kinds: one per kind of effect the shop applies.
const (
	// KindSubscriptionCancelled is a cancellation, at period end or at once.
	KindSubscriptionCancelled = "subscription.cancelled"
	// KindSubscriptionReinstated is a cancelled subscription made active again.
	KindSubscriptionReinstated = "subscription.reinstated"
	// KindInvoiceVoided is an upcoming invoice that will never be charged.
	KindInvoiceVoided = "invoice.voided"
	// KindReceiptSent is one more email of a paid invoice's receipt.
	KindReceiptSent = "receipt.sent"
	// KindRefundCreated is a new refund; its object is the order.
	KindRefundCreated = "refund.created"
	// KindOrderAddressChanged is a new shipping address on a pending order.
	KindOrderAddressChanged = "order.shipping_address_changed"
	// KindProductUpdated is a change to a product's name, description, price or stock.
	KindProductUpdated = "product.updated"
)

// LedgerEntry is one effect the shop applied, as GET /_ledger returns it.
// Object is the id of the object the effect changed (for a refund, the
// order); RequestID is the caller's X-Request-Id (or one the shop made up).
type LedgerEntry struct {
	ID        int64           `json:"id" db:"id"`
	At        time.Time       `json:"at" db:"at"`
	Kind      string          `json:"kind" db:"kind"`
	Object    string          `json:"object" db:"object"`
	RequestID string          `json:"request_id" db:"request_id"`
	Data      json.RawMessage `json:"data" db:"data"`
}

// errDiscardWrite rolls back a write that the ignore_writes fault swallows.
var errDiscardWrite = errors.New("demoshop: write discarded by fault")

// write runs fn in one transaction: fn applies the change, records its
// ledger effect and reads back the answer. Under the ignore_writes fault the
// transaction is rolled back and the caller still answers as if it committed.
// fn's context is the transaction's span's, so what it does shows beneath.
func (s *Shop) write(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	ctx, span := tracing.Within(ctx, "demoshop.transaction")
	defer span.End()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		if ignoringWrites(ctx) {
			return errDiscardWrite
		}
		return nil
	})
	if errors.Is(err, errDiscardWrite) {
		span.SetAttributes(attribute.Bool("demoshop.discarded", true))
		return nil
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	return err
}

// recordEffect appends one ledger row in the effect's own transaction.
func (s *Shop) recordEffect(ctx context.Context, tx pgx.Tx, kind, object string, data map[string]any) error {
	ctx, span := tracing.Within(ctx, "demoshop.ledger", attribute.String("demoshop.kind", kind), attribute.String("demoshop.object", object))
	defer span.End()
	_, err := tx.Exec(ctx, `
		INSERT INTO shop.ledger (at, kind, object, request_id, data)
		VALUES ($1, $2, $3, $4, $5)`,
		s.now(), kind, object, requestID(ctx), data)
	if err != nil {
		return fmt.Errorf("record %s on %s: %w", kind, object, err)
	}
	return nil
}

// handleLedgerList serves GET /_ledger?request_id=&object=&kind=&after_id=:
// every effect applied, oldest first, as a bare JSON array.
func (s *Shop) handleLedgerList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var afterID int64
	if raw := q.Get("after_id"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return errParam("after_id", "parameter_invalid_integer", "Invalid after_id: must be an integer.")
		}
		afterID = n
	}
	rows, err := s.pool.Query(r.Context(), `
		SELECT id, at, kind, object, request_id, data
		FROM shop.ledger
		WHERE ($1 = '' OR request_id = $1)
		  AND ($2 = '' OR object = $2)
		  AND ($3 = '' OR kind = $3)
		  AND id > $4
		ORDER BY id`,
		q.Get("request_id"), q.Get("object"), q.Get("kind"), afterID)
	if err != nil {
		return fmt.Errorf("list ledger: %w", err)
	}
	entries, err := pgx.CollectRows(rows, pgx.RowToStructByName[LedgerEntry])
	if err != nil {
		return fmt.Errorf("list ledger: %w", err)
	}
	if entries == nil {
		entries = []LedgerEntry{}
	}
	writeJSON(w, http.StatusOK, entries)
	return nil
}
