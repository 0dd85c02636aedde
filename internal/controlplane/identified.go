package controlplane

import "strings"

// Identification is how a staff person proved who they are before a
// change they made: the sign-in method of their console session
// (kit.KeyIdentifiedBy), or "slack" for a click in Slack. For single
// sign-on and Slack, Issuer and Subject name the person where they were
// identified: the OpenID provider's issuer and the ID token's subject, or
// the Slack workspace (team id) and the linked Slack user id. Every event
// a console user's change records carries it as "identified_by".
type Identification struct {
	Method  string `json:"method"`
	Issuer  string `json:"issuer,omitempty"`
	Subject string `json:"subject,omitempty"`
	// StepUp is set on an approval made with a fresh passkey proof for
	// that decision (step_up.go): the passkey that signed it.
	StepUp *StepUpProof `json:"step_up,omitempty"`
}

// The identification methods besides the session's own strings
// ("password", "oidc", "password+totp", "password+recovery", …).
const (
	// IdentifiedUnknown is a console user's change whose door did not say
	// how the person was identified: a session older than the record of
	// it that no password sign-in made, or a caller outside the web (the
	// demo, tests).
	IdentifiedUnknown = "unknown"
	// IdentifiedPassword is a sign-in with the console's password form.
	IdentifiedPassword = "password"
	// IdentifiedOIDC is a sign-in through the OpenID provider.
	IdentifiedOIDC = "oidc"
	// IdentifiedSlack is a click in Slack by a user linked to the account.
	IdentifiedSlack = "slack"
)

// IdentifiedAs is the actor identified by how.
func (a Actor) IdentifiedAs(how Identification) Actor {
	a.Identified = how
	return a
}

// recorded is the identification an event records: unknown when the door
// set none.
func (i Identification) recorded() Identification {
	if strings.TrimSpace(i.Method) == "" {
		return Identification{Method: IdentifiedUnknown, StepUp: i.StepUp}
	}
	return i
}

// IdentificationWords says how a person was identified, for the
// timeline ("single sign-on", "password and authenticator app"); empty
// when unknown.
func IdentificationWords(method string) string {
	if method == "" || method == IdentifiedUnknown {
		return ""
	}
	words := map[string]string{IdentifiedPassword: "password", IdentifiedOIDC: "single sign-on", IdentifiedSlack: "Slack",
		"totp": "authenticator app", "recovery": "recovery code", "passkey": "passkey"}
	parts := strings.Split(method, "+")
	for i, p := range parts {
		if w, ok := words[p]; ok {
			parts[i] = w
		}
	}
	return strings.Join(parts, " and ")
}
