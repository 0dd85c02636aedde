package handoffs

import (
	"context"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// Store is what hand-offs ask of the database (*store.Store): every change
// runs in one transaction that first locks the conversation's hand-offs.
type Store interface {
	InTx(ctx context.Context, fn func(*store.Tx) error) error
}

// Service takes, ends, takes over and sends on hand-offs.
type Service struct {
	store Store
	// control proposes a draft sent on; registry says which connected
	// system offers a draft's action.
	control  *controlplane.Service
	registry *adapter.Registry
	now      func() time.Time
}

// New builds the service over the control plane control and the registry
// of connected systems it was built with, with the clock now (time.Now
// when nil), which should be the control plane's own.
func New(st Store, control *controlplane.Service, registry *adapter.Registry, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, control: control, registry: registry, now: now}
}

// record appends an event in the transaction of the change it records.
func (s *Service) record(ctx context.Context, tx *store.Tx, actor controlplane.Actor, action controlplane.EventAction,
	taskID, invocationID string, data map[string]any) error {
	e, err := controlplane.AuditEvent(s.now(), actor, action, taskID, invocationID, data)
	if err != nil {
		return err
	}
	_, err = tx.InsertEvent(ctx, e)
	return err
}

// staffOnly refuses anyone but a console user who is staff: customers and
// assistants never take or end a hand-off.
func staffOnly(actor controlplane.Actor, verb string) error {
	if actor.Kind != controlplane.ActorUser || actor.Role == "customer" {
		return apperr.New(apperr.Forbidden, "Only a support agent can %s.", verb)
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
