package confirmation

import (
	"strings"
	"time"
)

// taskAssertionContext keeps a task assertion from passing for a
// confirmation's and the other way round: the same secret signs both.
const taskAssertionContext = "countersign task assertion v1."

// SignTaskAssertion returns a task assertion signed with the system's
// secret: the business's site vouches that the customer Sub of system Sys
// is the one in front of the assistant Aud (its id, as /admin/assistants
// shows it), for a few minutes, for one task. The format is the customer
// assertion's (SignAssertion) under its own context string.
func SignTaskAssertion(secret []byte, a Assertion) string {
	return signAssertion(secret, taskAssertionContext, a)
}

// OpenTaskAssertion verifies a task assertion with the secret of the
// system it names (one of secrets): signature, shape, nonce and lifetime.
// It returns the assertion, whose Aud, Sub and Sys the caller compares
// with the task, and whose nonce the caller spends; otherwise why it was
// refused, as the end of a sentence. One with a "loc" is refused: the
// customer's language is the customer assertion's to give.
func OpenTaskAssertion(secrets map[string][]byte, signed string, now time.Time) (Assertion, string) {
	payload, _, _ := strings.Cut(signed, ".")
	// The system is read before the signature is checked only to choose
	// the secret that checks it.
	claimed, ok := decodeAssertion(payload)
	if !ok {
		return Assertion{}, "it is malformed."
	}
	secret := secrets[claimed.Sys]
	if len(secret) == 0 {
		return Assertion{}, "no secret is configured for the system it names."
	}
	a, why := openAssertion(secret, taskAssertionContext, signed, now)
	if why == "" && a.Locale != "" {
		// The customer's language is set where their pages open (the
		// customer assertion); accepted here and unread, a "loc" would
		// tell the business it set what it did not.
		return Assertion{}, `it carries "loc", which a task assertion does not set: give the customer's language in the customer assertion of the confirmation link.`
	}
	return a, why
}
