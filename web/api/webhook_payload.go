package api

import (
	"context"
	"strings"

	"countersign/internal/webhooks"
)

// WebhookRender renders an invocation for an outcome webhook's body exactly
// as GET /api/v1/invocations/{id} shows it; base is the console's public
// address (for the customer's confirmation link), as there is no request
// to take it from. The worker in internal/webhooks calls it.
func (h *Handler) WebhookRender(base string) webhooks.Render {
	base = strings.TrimRight(base, "/")
	return func(ctx context.Context, invocationID string) (any, error) {
		inv, err := h.cfg.Control.Invocation(ctx, invocationID)
		if err != nil {
			return nil, err
		}
		return h.invocationOut(ctx, base, inv), nil
	}
}
