package assistants

import (
	"context"
	"fmt"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// Grants are what an admin allows an assistant's tasks: the most each
// task may ask for, and whether the assistant may act for any customer
// without the business vouching for them (a staff-facing assistant). And
// whether its reports (conversation events) count in the business's
// metrics without a vouched task of its own in the conversation (an
// assistant that only answers questions); without that grant they are
// kept and shown apart as its own claims.
type Grants struct {
	MaxWriteBudget     int  `json:"max_write_budget"`
	MaxInflightLimit   int  `json:"max_inflight_limit"`
	MaxRatePerMinute   int  `json:"max_rate_per_minute"`
	AnyCustomer        bool `json:"any_customer"`
	ReportsWithoutTask bool `json:"reports_without_task"`
}

// The maxima a new assistant starts with (the migration's column
// defaults); an admin changes them on /admin/assistants.
const (
	DefaultMaxWriteBudget   = 20
	DefaultMaxInflightLimit = 5
	DefaultMaxRatePerMinute = 30
)

// The ceilings of every task, whatever an admin grants.
const (
	CeilingWriteBudget   = 1000
	CeilingInflightLimit = 100
	CeilingRatePerMinute = 10000
)

// SetGrants changes an assistant's grants, recording who did it, before
// and after, in the same transaction (event assistant.grants_changed).
// A maximum outside its ceiling is an invalid-input error naming the
// field; no such assistant is not found.
func (s *Service) SetGrants(ctx context.Context, by controlplane.Actor, id string, g Grants) (Assistant, error) {
	if fields := g.Problems(); len(fields) > 0 {
		return Assistant{}, apperr.InvalidFields(fields)
	}
	before, err := s.Get(ctx, id)
	if err != nil {
		return Assistant{}, err
	}
	e, err := controlplane.AuditEvent(s.now(), by, controlplane.EventAssistantGrantsChanged, "", "",
		map[string]any{"assistant_id": id, "assistant": before.Name, "before": before.Grants, "after": g})
	if err != nil {
		return Assistant{}, err
	}
	row, err := s.store.SetAssistantGrants(ctx, id, store.AssistantGrants{MaxWriteBudget: int32(g.MaxWriteBudget),
		MaxInflightLimit: int32(g.MaxInflightLimit), MaxRatePerMinute: int32(g.MaxRatePerMinute), AnyCustomer: g.AnyCustomer,
		ReportsWithoutTask: g.ReportsWithoutTask}, e)
	if err != nil {
		return Assistant{}, err
	}
	return fromRow(row), nil
}

// Problems names each maximum outside its range, with the range; none
// when the grants may be saved.
func (g Grants) Problems() map[string]string {
	fields := map[string]string{}
	check := func(field string, v, lo, hi int) {
		if v < lo || v > hi {
			fields[field] = fmt.Sprintf("must be a whole number from %d to %d", lo, hi)
		}
	}
	check("max_write_budget", g.MaxWriteBudget, 0, CeilingWriteBudget)
	check("max_inflight_limit", g.MaxInflightLimit, 1, CeilingInflightLimit)
	check("max_rate_per_minute", g.MaxRatePerMinute, 1, CeilingRatePerMinute)
	return fields
}

func grantsFromRow(r store.Assistant) Grants {
	return Grants{MaxWriteBudget: int(r.MaxWriteBudget), MaxInflightLimit: int(r.MaxInflightLimit),
		MaxRatePerMinute: int(r.MaxRatePerMinute), AnyCustomer: r.AnyCustomer, ReportsWithoutTask: r.ReportsWithoutTask}
}
