package controlplane

import (
	"fmt"
	"strings"

	"countersign/internal/money"
)

// DefaultLimitCurrency is the currency of the limits of a policy that
// names none: the limits written before a policy stated its currency were
// in US dollars, and a quote that names no currency is read in them.
const DefaultLimitCurrency = "USD"

// Not-dispatched reasons of a request whose route, checked again at the
// permit, can no longer be compared with its policy's limits and needs a
// person who has not said yes (only the customer confirmed it, or the
// policy approved it, before the limits or the other currency came).
const (
	// CodeCurrencyNotLimited: the request is in a currency other than the
	// policy's limits.
	CodeCurrencyNotLimited = "currency_not_limited"
	// CodeMixedCurrencyExposure: the customer or object has money moved or
	// pending in another currency within the exposure window.
	CodeMixedCurrencyExposure = "mixed_currency_exposure"
)

// Currency is the currency p's amount limits are in, upper case: its
// LimitCurrency, US dollars when it names none.
func (p Policy) Currency() string {
	if p.LimitCurrency == "" {
		return DefaultLimitCurrency
	}
	return strings.ToUpper(p.LimitCurrency)
}

// hasAmountLimits reports whether p compares amounts with any limit.
func (p Policy) hasAmountLimits() bool {
	return p.AutoMaxCents != nil || p.ApprovalAboveCents != nil || p.SecondApproverAboveCents != nil || p.StepUpAboveCents != nil
}

// exposureCode is a currency as exposure compares it: upper case, US
// dollars when the quote names none (as money.Format reads it).
func exposureCode(currency string) string {
	if currency == "" {
		return DefaultLimitCurrency
	}
	return strings.ToUpper(currency)
}

// unlike says why a request's amount cannot be compared with its
// policy's limits: it is in another currency than they are, or money in
// another currency moved or is pending on its customer or object (adding
// the two would sum unlike units, leaving one out would let a split
// across currencies pass under the limits). Nothing is converted: such a
// request goes to a person (Route), under the strictest rules the policy
// has (decider, NeedsStepUp). The zero value is a comparable amount.
type unlike struct {
	// code is CodeCurrencyNotLimited or CodeMixedCurrencyExposure; "" when
	// the amount compares.
	code string
	// cur is the request's currency, other the other one at stake: the
	// policy's limits' or the one already moved.
	cur, other string
}

// unlikeAmount is why p cannot compare an amount in cur on a customer or
// object where other (empty for none) also moved or is pending. A policy
// without amount limits compares nothing, so nothing is unlike under it.
func unlikeAmount(p Policy, cur, other string) unlike {
	switch {
	case !p.hasAmountLimits():
		return unlike{}
	case cur != p.Currency():
		return unlike{code: CodeCurrencyNotLimited, cur: cur, other: p.Currency()}
	case other != "":
		return unlike{code: CodeMixedCurrencyExposure, cur: cur, other: other}
	}
	return unlike{}
}

// Unlike reports whether inv moves an amount in another currency than
// p's amount limits, so that none of them is compared with it (the card
// asks it; the route counted money in another currency on the customer
// or object too, which only its reason says).
func (p Policy) Unlike(inv Invocation) bool {
	return inv.AmountCents != nil && unlikeAmount(p, exposureCode(inv.Quote.Currency), "").code != ""
}

// reason is the route reason of an amount u makes unlike, in plain words
// for the card, the task view and the assistant ("" for a comparable one).
func (u unlike) reason() string {
	switch u.code {
	case CodeCurrencyNotLimited:
		return fmt.Sprintf("It moves %s; this action's limits are in %s, so a person decides.", u.cur, u.other)
	case CodeMixedCurrencyExposure:
		return fmt.Sprintf("It moves %s, and %s already moved or is pending on this customer or object; amounts in different currencies are never added up, so a person decides.",
			u.cur, u.other)
	}
	return ""
}

// notDispatched is the not-dispatched reason of a request u makes unlike
// whose deciders no longer cover its route at the permit.
func (u unlike) notDispatched() NotDispatchedReason {
	return NotDispatchedReason(u.code)
}

// ValidLimitCurrency is the field error of a policy's limit currency that
// is not an ISO 4217 code, or "".
func ValidLimitCurrency(code string) string {
	if money.Known(code) {
		return ""
	}
	return "enter the ISO 4217 code of the currency the amounts are in, in capitals: USD, EUR, GBP, JPY"
}
