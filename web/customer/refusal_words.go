package customer

import (
	"context"

	"countersign/internal/apperr"
	"countersign/internal/locale"
)

// refusalWords are the message ids (each with its ".hint") of the
// refusals from other packages that these pages show as they are — by
// internal/custkeys, internal/confirmation and internal/controlplane, whose
// own words are English — by their apperr code. A refusal whose words
// carry its own data (a time, an address) keeps them until its package
// gives the data apart.
var refusalWords = map[string]string{
	"passkeys_off":                  "receipt.passkey.error.off",
	"passkey_needs_stronger_proof":  "receipt.passkey.error.needs_stronger_proof",
	"passkey_refused":               "receipt.passkey.error.refused",
	"no_passkey":                    "receipt.passkey.error.no_passkey",
	"passkey_exists":                "receipt.passkey.error.exists",
	"too_many_passkeys":             "receipt.passkey.error.too_many",
	"nothing_to_decide":             "receipt.passkey.error.nothing_to_decide",
	"quote_changed":                 "receipt.passkey.error.quote_changed",
	"passkey_not_for_this_decision": "receipt.passkey.error.not_for_this_decision",
	"assertion_refused":             "receipt.refusal.assertion_refused",
	"mail_not_configured":           "receipt.refusal.mail_not_configured",
	"mail_failed":                   "receipt.refusal.mail_failed",
	"no_contact_on_file":            "receipt.refusal.no_contact_on_file",
	"too_many_tries":                "receipt.refusal.too_many_tries",
}

// refusalText is e's message and hint as one text for the customer: in
// their language when refusalWords knows its code, else e's own.
func refusalText(ctx context.Context, e *apperr.Error) string {
	if id, ok := refusalWords[e.Code]; ok {
		return joinSentences(locale.T(ctx, id, nil), locale.T(ctx, id+".hint", nil))
	}
	return joinSentences(e.Message, e.Hint)
}

// refusalMessage is e's message alone, for a page that says what to do
// next itself.
func refusalMessage(ctx context.Context, e *apperr.Error) string {
	if id, ok := refusalWords[e.Code]; ok {
		return locale.T(ctx, id, nil)
	}
	return e.Message
}

// joinSentences is a message and its hint as one text.
func joinSentences(a, b string) string {
	if b == "" {
		return a
	}
	return a + " " + b
}
