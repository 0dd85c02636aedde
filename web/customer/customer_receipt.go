package customer

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"
	"golang.org/x/text/language"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/views"
)

// customerReceipt is the receipt of a completed request, for people: in
// the shop's name, what was done and what changed (the quote's changes,
// and the lines that carry the decision), the system's reference, when,
// who said yes and how (the consent recorded with the decision, else our
// team's approval, else the shop's rules), when the read-back found the
// change, and the customer's route to the signed file. No internal id
// and no key's address: the page is for the customer, the file for
// whoever checks it. Its words are the viewer's language; the quote's are
// the one the customer decided in, as they read it (the consent's quote
// in the recorded locale, and the language of those words named), else
// the page's own (lines, and the quote in the page's language).
func (h *Handler) customerReceipt(ctx context.Context, f customerFrame, inv controlplane.Invocation, lines []views.CustomerQuoteLine) *views.CustomerReceiptView {
	r := &views.CustomerReceiptView{Shop: f.brand.Name, Title: customerTitle(quoteReadIn(ctx, inv)), Download: "/requests/" + inv.ID + "/receipt"}
	c, decided, err := h.cfg.Control.Consent(ctx, inv.ID)
	if err != nil {
		decided = false
	}
	if decided && c.Locale != "" {
		if q, ok := consentQuote(c); ok {
			shown := q.In(c.Locale)
			r.Title, lines = customerTitle(shown), nil
			for _, l := range shown.Lines {
				lines = append(lines, customerLine(l))
			}
			// The quote's words are in the language they were written or
			// translated in, which is not the page's when the quote had
			// no translation for it: the receipt names that one, and
			// none when the quote does not say its own.
			if read := shown.Locale; read != "" {
				if l, _ := locale.From(ctx); !readInPageLanguage(l.Tag(), read) {
					r.QuoteLang, r.QuoteDir = read, string(locale.Direction(language.Make(read)))
				}
				r.ReadIn = readIn(read)
			}
		}
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
		r.Done, r.DoneISO = locale.When(ctx, *inv.FinishedAt, f.zone, f.now), iso(*inv.FinishedAt)
	}
	if decided {
		r.Who = whoConfirmed(ctx, f, c)
	} else if approvals, err := h.cfg.Control.StaffApprovals(ctx, inv); err == nil && len(approvals) > 0 {
		at := approvals[len(approvals)-1].At
		r.Who = views.Say("receipt.who.staff", map[string]views.SaidArg{"Time": {Text: locale.When(ctx, at, f.zone, f.now), DateTime: iso(at)}})
	}
	if vf := inv.Verification; vf != nil && vf.Verified && !vf.At.IsZero() {
		r.Verified, r.VerifiedISO = locale.When(ctx, vf.At, f.zone, f.now), iso(vf.At)
	}
	return r
}

// consentQuote is the quote the consent keeps, every translation with it.
func consentQuote(c controlplane.CustomerConsent) (adapter.Quote, bool) {
	var q adapter.Quote
	if len(c.Quote) == 0 || json.Unmarshal(c.Quote, &q) != nil {
		return q, false
	}
	return q, true
}

// readInPageLanguage says whether the page's language is the decided one's.
func readInPageLanguage(page language.Tag, decided string) bool {
	pb, _ := page.Base()
	db, _ := language.Make(decided).Base()
	return page != locale.Pseudo && pb == db
}

// readIn is "You read this request in French.": one sentence per language
// a customer can decide in, so that each language names the other as its
// grammar does; a language added later without its sentence says its tag.
func readIn(tag string) *views.Said {
	base, _ := language.Make(tag).Base()
	for _, t := range locale.Supported() {
		if b, _ := t.Base(); b == base {
			return views.Say("receipt.read_in."+base.String(), nil)
		}
	}
	return views.Say("receipt.read_in.other", map[string]views.SaidArg{"Locale": {Text: tag}})
}

// whoConfirmed says how the customer said yes, from the consent recorded
// with their decision; never a staff member's name.
func whoConfirmed(ctx context.Context, f customerFrame, c controlplane.CustomerConsent) *views.Said {
	args := map[string]views.SaidArg{"Time": {Text: locale.When(ctx, c.At, f.zone, f.now), DateTime: iso(c.At)}}
	id := "receipt.who." + c.Proof
	switch c.Proof {
	case "link", "code", "account", "passkey":
	case "assertion":
		if f.brand.Name == "" {
			id = "receipt.who.assertion.unnamed"
		} else {
			args["Shop"] = views.SaidArg{Text: f.brand.Name}
		}
	default:
		id = "receipt.who.other"
	}
	return views.Say(id, args)
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
		return noReceipt(c.Request().Context(), inv.State)
	}
	if h.cfg.Receipt == nil {
		return said(&apperr.Error{Kind: apperr.NotFound, Code: "no_receipts", Message: locale.T(c.Request().Context(), "receipt.error.none", nil)})
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
func noReceipt(ctx context.Context, st controlplane.State) error {
	e := &apperr.Error{Kind: apperr.IllegalTransition, Code: "not_completed"}
	why := "not_done"
	switch st {
	case controlplane.Failed, controlplane.Rejected, controlplane.Expired, controlplane.NotDispatched:
		why = "not_carried_out"
	case controlplane.Unverified:
		why = "checking"
	}
	e.Message = locale.T(ctx, "receipt.error."+why, nil)
	e.Hint = locale.T(ctx, "receipt.error."+why+".hint", nil)
	return said(e)
}
