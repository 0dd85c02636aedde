package customer

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
)

// handleCustomerReceipt answers GET /requests/:id/receipt: the signed
// receipt of the customer's own completed request, the same compact JWS
// the assistant's API serves (GET /api/v1/invocations/{id}/receipt), as a
// file to keep. It needs the same proof as the request's page; another
// customer's request is "not found", and one not completed is 409.
func (h *Handler) handleCustomerReceipt(c echo.Context) error {
	inv, _, err := h.customerRequest(c)
	if err != nil {
		return err
	}
	if inv.State != controlplane.Completed && inv.State != controlplane.Reversed {
		return noReceipt(inv.State)
	}
	if h.cfg.Receipt == nil {
		return &apperr.Error{Kind: apperr.NotFound, Code: "no_receipts", Message: "This console issues no receipts."}
	}
	jws, err := h.cfg.Receipt(c.Request().Context(), inv)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="receipt-`+inv.ID+`.jws"`)
	return c.Blob(http.StatusOK, "application/jose", []byte(jws))
}

// noReceipt is the refusal of a receipt for a request in state st, said
// as that state allows: one that ended without being carried out never
// will have one; one still being checked or on its way may.
func noReceipt(st controlplane.State) *apperr.Error {
	e := &apperr.Error{Kind: apperr.IllegalTransition, Code: "not_completed"}
	switch st {
	case controlplane.Failed, controlplane.Rejected, controlplane.Expired, controlplane.NotDispatched:
		e.Message = "This request was not carried out, so there is no receipt."
		e.Hint = "Its page says what happened to it."
	case controlplane.Unverified:
		e.Message = "There is no receipt yet: we are still checking whether this request went through."
		e.Hint = "Come back to this request's page; it says when the check is done."
	default:
		e.Message = "There is a receipt once this request is done; it is not done yet."
		e.Hint = "Come back to this request's page once it says it is done."
	}
	return e
}
