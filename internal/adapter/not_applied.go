package adapter

import (
	"fmt"
	"time"
)

// CodeNotApplied is the error of a call an authoritative record proves was
// never applied (NotApplied): failed, nothing changed, never re-sent.
const CodeNotApplied = "not_applied"

// NotApplied is why a call was not applied, for an adapter whose record of
// effects is authoritative: a transactional store where each effect
// commits with its key in one transaction, read directly (not a replica
// or an index that may lag). It returns nil unless look says the call was
// begun (the request ledger has it) and not refused, the record's answer
// holds no effect under the key, and the call was begun settleAfter or
// more before now — by then, no effect means none ever. That holds also
// when the ledger recorded the system's answer "applied": an answer that
// said done while the record holds nothing under the key was rolled back
// or never true, and the record is the system's. who names the system in
// the message. The caller sets LookupResult.NotApplied with it; reconcile
// settles.
func NotApplied(look LookupResult, now time.Time, settleAfter time.Duration, who string) *Error {
	if !look.Found || look.LedgerState == "refused" || len(look.Effects) > 0 {
		return nil
	}
	age := now.Sub(look.BegunAt)
	if age < settleAfter {
		return nil
	}
	return &Error{Code: CodeNotApplied, Outcome: Refused,
		Message: fmt.Sprintf("%s has no effect under this call's key in its authoritative record, %s after the call was begun: it was not applied.",
			who, age.Round(time.Second)),
		Hint: "Propose the action again if it is still wanted."}
}
