package sso

import "countersign/internal/apperr"

// The codes of a refused sign-in, one per check, so a page, a log line and
// a test can tell them apart.
const (
	codeStateUnknown = "sso_state_unknown"
	codeOtherBrowser = "sso_state_other_browser"
	codeStateExpired = "sso_state_expired"
	codeCodeRefused  = "sso_code_refused"
	codeTokenInvalid = "sso_token_invalid"
	codeNonce        = "sso_nonce_mismatch"
	codeNoGroup      = "sso_no_group"
	codeNoEmail      = "sso_no_email"
	codeEmailTaken   = "sso_email_taken"
	codeDisabled     = "sso_account_disabled"
	codeProvider     = "sso_provider_refused"
	codeConfirmOther = "sso_confirm_other_person"
	codeConfirmStale = "sso_confirm_not_fresh"
)

// refusals are the words of each refusal: what happened and what to do.
var refusals = map[string]struct {
	kind          apperr.Kind
	message, hint string
}{
	codeStateUnknown: {apperr.Unauthenticated, "This sign-in link is not one we sent, or it was already used.",
		"Start again with the sign-in button."},
	codeOtherBrowser: {apperr.Unauthenticated, "This sign-in was started in another browser.",
		"Start again with the sign-in button in this browser."},
	codeStateExpired: {apperr.Unauthenticated, "This sign-in took too long and has expired.",
		"Start again with the sign-in button."},
	codeCodeRefused: {apperr.Unauthenticated, "The identity provider did not accept this sign-in (the code was used already or has expired).",
		"Start again with the sign-in button."},
	codeTokenInvalid: {apperr.Unauthenticated, "The identity provider's answer could not be verified for this console.",
		"Start again; if it happens again, ask your admin to check the console's OpenID client settings."},
	codeNonce: {apperr.Unauthenticated, "The identity provider's answer was not made for this sign-in.",
		"Start again with the sign-in button."},
	codeNoGroup: {apperr.Forbidden, "Your identity provider account is in none of the groups that may use the console.",
		"Ask your admin to add you to a group for support agents, managers or admins."},
	codeNoEmail: {apperr.Forbidden, "Your identity provider did not tell us your e-mail address.",
		"Ask your admin to release the e-mail claim (scope \"email\") to the console."},
	codeEmailTaken: {apperr.Forbidden, "A console account with your e-mail address exists already and is not linked to this identity provider.",
		"Ask an admin to remove or rename the old account, then sign in again."},
	codeDisabled: {apperr.Forbidden, "Your console account is disabled.",
		"Ask an admin to enable it."},
	codeProvider: {apperr.Unauthenticated, "The identity provider did not sign you in.",
		"Start again; if it happens again, ask your admin."},
	codeConfirmOther: {apperr.Forbidden, "Someone else signed in at the identity provider: only the person signed in here can confirm for this account.",
		"You are still signed in here as before. Confirm again and sign in at the provider as yourself."},
	codeConfirmStale: {apperr.Forbidden, "The identity provider did not ask you to sign in again just now, so this does not confirm it is you.",
		"Confirm again and sign in at the provider; if it keeps happening, ask your admin to let the console's client ask for a new sign-in (prompt=login, max_age)."},
}

// refuse is the apperr.Error of a refusal; cause is for the logs only.
func refuse(code string, cause error) *apperr.Error {
	r := refusals[code]
	return &apperr.Error{Kind: r.kind, Code: code, Message: r.message, Hint: r.hint, Err: cause}
}

// ProviderRefused is the refusal of a callback that carries the provider's
// error (the person cancelled, or the provider said no); description is
// the provider's, for the logs.
func ProviderRefused(description string) error {
	e := refuse(codeProvider, nil)
	if description != "" {
		e.Err = providerError(description)
	}
	return e
}

type providerError string

func (e providerError) Error() string { return "provider: " + string(e) }
