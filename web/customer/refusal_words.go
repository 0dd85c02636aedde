package customer

import (
	"errors"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
)

// This file is the one place a refusal becomes words on a customer's
// page. Other packages (internal/confirmation, internal/controlplane,
// internal/custkeys) word their refusals in English for the API and the
// logs; a customer's page says each by its apperr code from the
// catalogue, with the facts the refusal carries as data (Details), and a
// refusal it has no words for in a generic sentence, logging the code.
// This package's own refusals are written in the customer's language
// where they are made (said).

// refusalID is a refusal's message id and, when it has one, its hint's.
type refusalID struct{ message, hint string }

// refusalWords are the catalogue's words for the refusals of other
// packages, by apperr code.
var refusalWords = map[string]refusalID{
	// internal/confirmation: the link page's proofs.
	"mail_not_configured": {"pages.problem.mail_not_configured", ""},
	"mail_failed":         {"pages.problem.mail_failed", ""},
	"no_contact_on_file":  {"pages.problem.no_contact_on_file", ""},
	"too_many_tries":      {"pages.problem.too_many_tries", ""},
	"too_many_mails":      {"pages.problem.too_many_mails", ""},
	"too_many_codes":      {"pages.problem.too_many_codes", ""},
	"assertion_refused":   {"pages.problem.assertion_refused", ""},
	"nothing_to_decide":   {"pages.problem.nothing_to_decide", ""},
	// internal/controlplane and internal/confirmation: the decision's proof.
	"proof_not_accepted":     {"pages.refusal.proof_not_accepted", "pages.refusal.proof_not_accepted.hint"},
	"prove_for_this_request": {"pages.refusal.prove_for_this_request", "pages.refusal.prove_for_this_request.hint"},
	// internal/custkeys: the passkey ceremonies and the passkey decision.
	"passkeys_off":                  {"receipt.passkey.error.off", "receipt.passkey.error.off.hint"},
	"passkey_needs_stronger_proof":  {"receipt.passkey.error.needs_stronger_proof", "receipt.passkey.error.needs_stronger_proof.hint"},
	"passkey_refused":               {"receipt.passkey.error.refused", "receipt.passkey.error.refused.hint"},
	"no_passkey":                    {"receipt.passkey.error.no_passkey", "receipt.passkey.error.no_passkey.hint"},
	"passkey_exists":                {"receipt.passkey.error.exists", "receipt.passkey.error.exists.hint"},
	"too_many_passkeys":             {"receipt.passkey.error.too_many", "receipt.passkey.error.too_many.hint"},
	"quote_changed":                 {"receipt.passkey.error.quote_changed", "receipt.passkey.error.quote_changed.hint"},
	"passkey_not_for_this_decision": {"receipt.passkey.error.not_for_this_decision", "receipt.passkey.error.not_for_this_decision.hint"},
	"no_such_passkey":               {"receipt.passkey.error.no_such_passkey", "receipt.passkey.error.no_such_passkey.hint"},
	"passkey_signature_required":    {"refusal.passkey_signature_required", "refusal.passkey_signature_required.hint"},
	"passkey_not_yours":             {"refusal.passkey_not_yours", "refusal.passkey_not_yours.hint"},
}

// saidError is a refusal this package wrote in the customer's language
// already; the pages show its message and hint as they are.
type saidError struct{ e *apperr.Error }

func (s saidError) Error() string { return s.e.Error() }
func (s saidError) Unwrap() error { return s.e }

// said marks e as written in the customer's language.
func said(e *apperr.Error) error { return saidError{e} }

// words are a refusal as a customer's page says it.
type words struct{ message, hint string }

// text is the message and its hint as one text.
func (w words) text() string {
	if w.hint == "" {
		return w.message
	}
	return w.message + " " + w.hint
}

// refusalOf is how a customer's page says the refusal err, in the page's
// language: this package's own words (said), the catalogue's for its
// code with the data it carries (the time and masked address of the
// last mail), or else a generic sentence, the code going to the log.
func (h *Handler) refusalOf(c echo.Context, err error) words {
	var s saidError
	if errors.As(err, &s) {
		return words{s.e.Message, s.e.Hint}
	}
	f := h.frameFor(c, "")
	e, ok := apperr.As(err)
	id, known := refusalWords[codeOf(e, ok)]
	if !known {
		h.logUnsaid(c, "refusal", codeOf(e, ok), err)
		return words{message: f.t("refusal.other", nil)}
	}
	p := locale.Params{}
	if at, ok := e.Details["sent_at"].(time.Time); ok {
		p["Time"] = isolate(f.at(at))
	}
	if to, ok := e.Details["sent_to"].(string); ok {
		p["To"] = isolate(to)
	}
	w := words{message: f.t(id.message, p)}
	if id.hint != "" {
		w.hint = f.t(id.hint, p)
	}
	return w
}

// codeOf is e's code, "" for an error outside apperr's vocabulary.
func codeOf(e *apperr.Error, ok bool) string {
	if !ok {
		return ""
	}
	return e.CodeOrKind()
}

// fieldWords are err's field errors in the page's language, by each
// field's code (apperr.Error.FieldCodes): the code field's, counting the
// tries left with the language's plural rule, and a decline's reason
// over its length; a field error without words is a generic sentence,
// its code going to the log.
func (h *Handler) fieldWords(c echo.Context, err error) map[string]string {
	var s saidError
	if errors.As(err, &s) {
		return s.e.Fields
	}
	e, ok := apperr.As(err)
	if !ok {
		return nil
	}
	f := h.frameFor(c, "")
	out := make(map[string]string, len(e.Fields))
	for field := range e.Fields {
		fc := e.FieldCodes[field]
		switch fc.Code {
		case confirmation.CodeFormat:
			out[field] = f.t("pages.prove.code.format", nil)
		case confirmation.CodeGone:
			out[field] = f.t("pages.prove.code.gone", nil)
		case confirmation.CodeLocked:
			out[field] = f.t("pages.prove.code.locked", nil)
		case confirmation.CodeWrong:
			left, _ := fc.Data["tries_left"].(int)
			out[field] = f.loc.N("pages.prove.code.wrong", left, nil)
		case controlplane.ReasonTooLong:
			out[field] = f.t("pages.request.reason.too_long", nil)
		default:
			h.logUnsaid(c, "field "+field, fc.Code, e)
			out[field] = f.t("refusal.field.other", nil)
		}
	}
	return out
}

// sayRefusal is err as a customer's page shows it: a refusal in the
// page's language (refusalOf), its fields' errors too, keeping err's
// kind, code and retry for the status and err as the cause for the logs.
// An error outside apperr's vocabulary, or an internal one, is left to
// the error page, which never shows its words.
func (h *Handler) sayRefusal(c echo.Context, err error) error {
	if err == nil || errors.As(err, new(saidError)) {
		return err
	}
	e, ok := apperr.As(err)
	if !ok || e.Kind == apperr.Internal {
		return err
	}
	w := h.refusalOf(c, err)
	out := &apperr.Error{Kind: e.Kind, Code: e.Code, Message: w.message, Hint: w.hint, Retryable: e.Retryable,
		RetryAfterSeconds: e.RetryAfterSeconds, Err: err}
	if len(e.Fields) > 0 {
		out.Fields = h.fieldWords(c, err)
	}
	return said(out)
}

// logUnsaid logs a refusal a customer's page said in generic words, so
// that its code gets words of its own.
func (h *Handler) logUnsaid(c echo.Context, what, code string, err error) {
	if h.Frame == nil || h.Site == nil || h.Log == nil {
		return
	}
	h.Log.Warn("customer page: a refusal without words in the catalogue", "what", what, "code", code,
		"path", c.Request().URL.Path, "error", err)
}
