package customer

import (
	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
)

// problemText is a refusal on the link page in the customer's language,
// as every customer's page says it (refusalOf): pages.problem.<code>,
// with the time and the masked address of the last mail for the limits
// that name them.
func (h *Handler) problemText(c echo.Context, e *apperr.Error) string {
	return h.refusalOf(c, e).text()
}
