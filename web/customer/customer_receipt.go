package customer

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/views"
)

// customerReceipt is the receipt of a completed request, for people: in
// the shop's name, what was done and what changed (the quote's changes,
// and the lines that carry the decision), the system's reference, when,
// who said yes and how (the consent recorded with the decision, else our
// team's approval, else the shop's rules), when the read-back found the
// change, and the customer's route to the signed file. No internal id
// and no key's address: the page is for the customer, the file for
// whoever checks it.
func (h *Handler) customerReceipt(ctx context.Context, f customerFrame, inv controlplane.Invocation, lines []views.CustomerQuoteLine) *views.CustomerReceiptView {
	r := &views.CustomerReceiptView{Shop: f.shop(), Title: customerTitle(inv.Quote), Download: "/requests/" + inv.ID + "/receipt"}
	if r.Shop == "the business" {
		r.Shop = "the business you asked"
	}
	for _, l := range lines {
		if l.From != "" || l.Emphasis || l.Sentence != "" {
			r.Changed = append(r.Changed, l)
		}
	}
	// The reference the customer reads is the system's own as it shows it
	// to its customers; the signed receipt carries the full one.
	r.Reference = inv.CustomerReference()
	if inv.FinishedAt != nil {
		r.Done, r.DoneISO = f.at(*inv.FinishedAt), inv.FinishedAt.UTC().Format(time.RFC3339)
	}
	r.Who = h.whoConfirmed(ctx, f, inv)
	if vf := inv.Verification; vf != nil && vf.Verified && !vf.At.IsZero() {
		r.Verified, r.VerifiedISO = f.at(vf.At), vf.At.UTC().Format(time.RFC3339)
	}
	return r
}

// whoConfirmed says who said yes to inv and how, from what was recorded;
// never a staff member's name. A receipt that cannot say it says nothing
// rather than guess.
func (h *Handler) whoConfirmed(ctx context.Context, f customerFrame, inv controlplane.Invocation) string {
	if c, ok, err := h.cfg.Control.Consent(ctx, inv.ID); err == nil && ok {
		how := map[string]string{
			"link":      ", with the link we e-mailed you",
			"code":      ", with a code we e-mailed you",
			"account":   ", signed in to your account",
			"assertion": ", signed in on " + f.shop() + "'s website",
			"passkey":   ", with your passkey",
		}[c.Proof]
		return "You confirmed this on " + f.at(c.At) + how + "."
	}
	if approvals, err := h.cfg.Control.StaffApprovals(ctx, inv); err == nil && len(approvals) > 0 {
		return "Our team approved this on " + f.at(approvals[len(approvals)-1].At) + "."
	}
	return ""
}

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
