package controlplane

import (
	"context"
	"time"

	"countersign/store"
)

// LinkMinter makes the customer's confirmation link of an invocation
// routed to them (confirmation.Service). The control plane stores it in
// the transaction that routes the invocation to the customer — a proposal
// or a fresh quote — so a read of an invocation never writes one.
type LinkMinter interface {
	NewLink(invocationID, customerRef string, expiresAt, now time.Time) store.ConfirmationLink
}

// MintLinksWith has the control plane make each confirmation link with m.
// Call it once, before the service is used.
func (s *Service) MintLinksWith(m LinkMinter) { s.links = m }

// mintLink stores the link of row when it awaits its customer.
func (s *Service) mintLink(ctx context.Context, tx *store.Tx, row store.Invocation, customerRef string) error {
	if s.links == nil || row.State != string(AwaitingConfirmation) || row.DeadlineAt == nil {
		return nil
	}
	return tx.InsertConfirmationLink(ctx, s.links.NewLink(row.ID, customerRef, *row.DeadlineAt, s.now()))
}
