package customer

import (
	"fmt"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/locale"
)

// This file holds the customer's side of the proof pages' refusals: the
// confirmation service says what went wrong in codes (and English for
// logs and the API); the page says it in the customer's language.

// problemText is a refusal on the link page in the customer's language,
// from its code: pages.problem.<code>, with the time and the masked
// address of the last mail for the limits that name them.
func (h *Handler) problemText(c echo.Context, e *apperr.Error) string {
	f := h.frameFor(c, "")
	switch e.Code {
	case "too_many_mails", "too_many_codes":
		at, _ := e.Details["sent_at"].(time.Time)
		to, _ := e.Details["sent_to"].(string)
		return f.t("pages.problem."+e.Code, locale.Params{"Time": isolate(f.at(at)), "To": isolate(to)})
	case "mail_not_configured", "mail_failed", "no_contact_on_file", "too_many_tries", "nothing_to_decide",
		"assertion_refused", "proof_not_accepted":
		return f.t("pages.problem."+e.Code, nil)
	}
	return f.t("pages.problem.other", nil)
}

// codeFieldErrors are the code field's errors in the customer's language.
// The confirmation service words them for the API; the page says each
// in the customer's language, counting the tries left with the
// language's plural rule.
func codeFieldErrors(c echo.Context, fields map[string]string) map[string]string {
	msg, ok := fields["code"]
	if !ok {
		return fields
	}
	ctx := c.Request().Context()
	out := map[string]string{}
	for k, v := range fields {
		out[k] = v
	}
	var left int
	switch {
	case strings.HasPrefix(msg, "enter the"):
		out["code"] = locale.T(ctx, "pages.prove.code.format", nil)
	case strings.HasPrefix(msg, "this code no longer works"):
		out["code"] = locale.T(ctx, "pages.prove.code.gone", nil)
	case strings.HasPrefix(msg, "that code is wrong, and no more"):
		out["code"] = locale.T(ctx, "pages.prove.code.locked", nil)
	default:
		if _, err := fmt.Sscanf(msg, "that code is wrong; %d tries left", &left); err == nil {
			out["code"] = locale.N(ctx, "pages.prove.code.wrong", left, nil)
		}
	}
	return out
}

// reasonFieldErrors are a decline's field errors in the customer's
// language: the control plane refuses only a reason over its length.
func reasonFieldErrors(c echo.Context, fields map[string]string) map[string]string {
	if _, ok := fields["reason"]; !ok {
		return fields
	}
	out := map[string]string{}
	for k, v := range fields {
		out[k] = v
	}
	out["reason"] = locale.T(c.Request().Context(), "pages.request.reason.too_long", nil)
	return out
}

// refusal is a refusal of the customer's request or decision, said in
// the customer's language: the control plane words it in English for
// the API and the logs; its code picks the page's pages.refusal.<code>.
// Other errors are returned as they are.
func refusal(c echo.Context, err error) error {
	e, ok := apperr.As(err)
	if !ok {
		return err
	}
	switch e.Code {
	case "prove_for_this_request", "proof_not_accepted", "nothing_to_decide":
		ctx := c.Request().Context()
		said := *e
		said.Message = locale.T(ctx, "pages.refusal."+e.Code, nil)
		said.Hint = locale.T(ctx, "pages.refusal."+e.Code+".hint", nil)
		return &said
	}
	return err
}
