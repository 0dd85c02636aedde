package lists

import (
	"context"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
)

// CustomerInvocations lists the invocations of every task opened for a
// customer, newest first, at most limit: the customer's "My requests". It
// fails on an invocation that does not decode.
func (s *Service) CustomerInvocations(ctx context.Context, customerRef string, limit int) ([]controlplane.Invocation, error) {
	rows, err := s.store.InvocationsForCustomer(ctx, adapter.NormaliseCustomerRef(customerRef), limit)
	if err != nil {
		return nil, err
	}
	return controlplane.InvocationsFromRows(rows)
}
