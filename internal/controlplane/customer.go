package controlplane

import (
	"context"

	"countersign/internal/adapter"
)

// CustomerInvocations lists the invocations of every task opened for a
// customer, newest first, at most limit: the customer's "My requests".
func (s *Service) CustomerInvocations(ctx context.Context, customerRef string, limit int) ([]Invocation, error) {
	rows, err := s.store.InvocationsForCustomer(ctx, adapter.NormaliseCustomerRef(customerRef), limit)
	if err != nil {
		return nil, err
	}
	return fromRows(rows)
}
