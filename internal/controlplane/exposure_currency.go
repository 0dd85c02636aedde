package controlplane

import (
	"fmt"
	"strings"

	"countersign/internal/apperr"
)

// LimitCurrency is the currency a policy's amounts are in: its automatic
// ceiling, approval threshold, second-approver amount and step-up amount,
// which the console writes and reads in US dollars. A policy carries no
// currency of its own yet, so every limit is in this one.
const LimitCurrency = "USD"

// Codes of the refusals of an amount that cannot be compared with a
// policy's limits.
const (
	// CodeCurrencyNotLimited: the request is in a currency other than the
	// policy's limits.
	CodeCurrencyNotLimited = "currency_not_limited"
	// CodeMixedCurrencyExposure: the customer or object already has money
	// moved or pending in another currency within the exposure window.
	CodeMixedCurrencyExposure = "mixed_currency_exposure"
)

// hasAmountLimits reports whether p compares amounts with any limit.
func (p Policy) hasAmountLimits() bool {
	return p.AutoMaxCents != nil || p.ApprovalAboveCents != nil || p.SecondApproverAboveCents != nil || p.StepUpAboveCents != nil
}

// exposureCode is a currency as exposure compares it: upper case, US
// dollars when the quote names none (as money.Format reads it).
func exposureCode(currency string) string {
	if currency == "" {
		return LimitCurrency
	}
	return strings.ToUpper(currency)
}

// limitedCurrency is the request's currency as the exposure sums it, or
// a refusal when p has limits and they are in another currency: 4,210 yen
// compared with a $25.00 ceiling would read as $42.10, so the amount is
// refused, never converted nor compared.
func limitedCurrency(p Policy, currency string) (string, error) {
	cur := exposureCode(currency)
	if cur == LimitCurrency || !p.hasAmountLimits() {
		return cur, nil
	}
	return "", &apperr.Error{Kind: apperr.Invalid, Code: CodeCurrencyNotLimited,
		Message: fmt.Sprintf("This request moves %s, and the limits of the policy of %s are in %s: the two cannot be compared.",
			cur, p.Action, LimitCurrency),
		Hint: "A person handles this request in the business system, or an administrator removes the policy's amount limits.",
		Fields: map[string]string{"currency": fmt.Sprintf("is %s; the policy's limits are in %s: propose amounts in %s, or hand the case to a person",
			cur, LimitCurrency, LimitCurrency)}}
}

// mixedExposure refuses a request when money in another currency moved or
// is pending on the same customer or object and p has limits: adding the
// two would compare a sum of unlike units with the limits, and leaving one
// out would let a split across currencies pass under them.
func mixedExposure(p Policy, cur, other string) error {
	if other == "" || !p.hasAmountLimits() {
		return nil
	}
	return &apperr.Error{Kind: apperr.Conflict, Code: CodeMixedCurrencyExposure,
		Message: fmt.Sprintf("Money in %s moved or is pending on this customer or object, and this request is in %s: amounts in different currencies are never added up against the policy's limits.",
			other, cur),
		Hint: "Wait until the exposure window has passed, or hand the case to a person.",
		Fields: map[string]string{"currency": fmt.Sprintf("is %s, and %s already moved or is pending on this customer or object: propose in one currency only, or hand the case to a person",
			cur, other)}}
}

// currencyReason is why a request whose route, checked again at the
// permit, was refused for its currency (limitedCurrency, mixedExposure)
// is not dispatched; "" for any other err.
func currencyReason(err error) NotDispatchedReason {
	e, ok := apperr.As(err)
	if !ok {
		return ""
	}
	switch e.Code {
	case CodeCurrencyNotLimited:
		return ReasonCurrencyNotLimited
	case CodeMixedCurrencyExposure:
		return ReasonMixedCurrency
	}
	return ""
}
