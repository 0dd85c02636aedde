package console

import "countersign/internal/controlplane"

// factorWords says a change to second factors: a person's own (the kind,
// and a passkey's name), or an admin's reset of someone's.
func factorWords(action controlplane.EventAction, kind, name, person string) string {
	if action == controlplane.EventFactorReset {
		if person == "" {
			person = "a person"
		}
		return "removed every second factor of " + person + " and signed them out everywhere."
	}
	what := map[string]string{"totp": "an authenticator app", "passkey": "a passkey", "recovery_codes": "new recovery codes"}[kind]
	if kind == "passkey" && name != "" {
		what = "the passkey " + quoted(name)
	}
	if what == "" {
		what = "a second factor"
	}
	if action == controlplane.EventFactorRemoved {
		return "removed " + what + " of their own."
	}
	if kind == "recovery_codes" {
		return "made " + what + "; the earlier ones no longer work."
	}
	return "added " + what + " as their second factor."
}

// customerPasskeyWords says a customer's change to their passkeys for a
// business: which passkey, for whom, and what it means.
func customerPasskeyWords(action controlplane.EventAction, name, shop string) string {
	what := "a passkey"
	if name != "" {
		what = "the passkey " + quoted(name)
	}
	if shop == "" {
		shop = "this business"
	}
	if action == controlplane.EventCustomerPasskeyRemoved {
		return "removed " + what + " for " + shop + "; it no longer decides their requests."
	}
	return "added " + what + " for " + shop + ", which now confirms or declines their requests on its own."
}
