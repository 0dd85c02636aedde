package console

import (
	"countersign/internal/controlplane"
	"countersign/internal/locale"
)

// factorWords says a change to second factors: a person's own (the kind,
// and a passkey's name), or an admin's reset of someone's.
func factorWords(action controlplane.EventAction, kind, name, person string) string {
	if action == controlplane.EventFactorReset {
		if person == "" {
			return say("console.timeline.factor.reset_unnamed", nil)
		}
		return say("console.timeline.factor.reset", locale.Params{"Person": person})
	}
	what := say("console.timeline.factor.other", nil)
	switch {
	case kind == "passkey" && name != "":
		what = say("console.timeline.factor.passkey_named", locale.Params{"Name": name})
	case kind == "totp" || kind == "passkey" || kind == "recovery_codes":
		what = say("console.timeline.factor."+kind, nil)
	}
	if action == controlplane.EventFactorRemoved {
		return say("console.timeline.factor.removed", locale.Params{"What": what})
	}
	if kind == "recovery_codes" {
		return say("console.timeline.factor.recovery_made", nil)
	}
	return say("console.timeline.factor.added", locale.Params{"What": what})
}

// customerPasskeyWords says a customer's change to their passkeys for a
// business: which passkey, for whom, and what it means.
func customerPasskeyWords(action controlplane.EventAction, name, shop string) string {
	what := say("console.timeline.factor.passkey", nil)
	if name != "" {
		what = say("console.timeline.factor.passkey_named", locale.Params{"Name": name})
	}
	if shop == "" {
		shop = say("console.timeline.customer_passkey.this_business", nil)
	}
	if action == controlplane.EventCustomerPasskeyRemoved {
		return say("console.timeline.customer_passkey.removed", locale.Params{"What": what, "Shop": shop})
	}
	return say("console.timeline.customer_passkey.added", locale.Params{"What": what, "Shop": shop})
}
