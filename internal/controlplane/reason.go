package controlplane

import (
	"strings"
)

// Reason is why an invocation ended without being carried out: a stable
// code a program can branch on and a sentence a person can read.
type Reason struct {
	Code    string
	Message string
}

// The codes of a rejected or expired invocation; a not-dispatched one
// carries its NotDispatchedReason as the code.
const (
	ReasonRejectedByAgent     = "rejected_by_agent"
	ReasonDeclinedByCustomer  = "declined_by_customer"
	ReasonSuperseded          = "superseded"
	ReasonApprovalExpired     = "approval_expired"
	ReasonConfirmationExpired = "confirmation_expired"
)

// supersededPrefix starts the decision reason of an invocation closed
// because its target changed after the quote (see supersede).
const supersededPrefix = "superseded: "

// Reason says why the invocation was not dispatched, rejected, declined or
// expired; nil for every other state (a failure has its Error instead).
func (inv Invocation) Reason() *Reason {
	customer := inv.RouteReason == routeCustomerConfirms
	switch inv.State {
	case NotDispatched:
		code := string(inv.NotDispatchedReason)
		if code == "" {
			code = "not_dispatched"
		}
		if inv.Withdrawn() {
			return &Reason{Code: code, Message: withdrawnSentence}
		}
		return &Reason{Code: code, Message: inv.NotDispatchedReason.Sentence()}
	case Rejected:
		text := strings.TrimSpace(inv.DecisionReason)
		switch {
		case strings.HasPrefix(text, supersededPrefix):
			return &Reason{Code: ReasonSuperseded, Message: sentence(strings.TrimPrefix(text, supersededPrefix))}
		case customer:
			if text == "" {
				return &Reason{Code: ReasonDeclinedByCustomer, Message: "The customer declined it without giving a reason."}
			}
			return &Reason{Code: ReasonDeclinedByCustomer, Message: "The customer declined it: " + sentence(text)}
		}
		if text == "" {
			return &Reason{Code: ReasonRejectedByAgent, Message: "A support agent rejected it."}
		}
		return &Reason{Code: ReasonRejectedByAgent, Message: sentence(text)}
	case Expired:
		if customer {
			return &Reason{Code: ReasonConfirmationExpired, Message: "The customer did not confirm it before the deadline."}
		}
		return &Reason{Code: ReasonApprovalExpired, Message: "Nobody approved or rejected it before the deadline."}
	}
	return nil
}

// sentence capitalises s and ends it with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "!") && !strings.HasSuffix(s, "?") {
		s += "."
	}
	return s
}
