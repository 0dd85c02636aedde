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
		return &apperr.Error{Kind: apperr.IllegalTransition, Code: "not_completed",
			Message: "There is a receipt once this request is done; it is not done yet.",
			Hint:    "Come back to this request's page once it says it is done."}
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
