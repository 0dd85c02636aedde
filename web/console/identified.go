package console

import (
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/web/kit"
)

// actorOf is u acting from this request's session: every staff door builds
// its actor here, so the audit event records how u was identified.
func actorOf(c echo.Context, u accounts.User) controlplane.Actor {
	return controlplane.UserActor(u.ID, string(u.Role), u.Name).IdentifiedAs(identificationOf(c, u))
}

// identificationOf is how the session's person proved who they are
// (kit.KeyIdentifiedBy, and for single sign-on the issuer and subject).
// A session from before the console recorded it counts as a password
// sign-in only when it was one: a staff session without the OpenID
// provider's expiry, since until single sign-on and second factors came
// the password form was the only way a staff session was made and both
// have recorded the method from their first commit. Anything else is
// unknown, never guessed.
func identificationOf(c echo.Context, u accounts.User) controlplane.Identification {
	sess := kit.Session(c)
	if sess == nil {
		return controlplane.Identification{Method: controlplane.IdentifiedUnknown}
	}
	str := func(k string) string { s, _ := sess.Values[k].(string); return s }
	if by := str(kit.KeyIdentifiedBy); by != "" {
		return controlplane.Identification{Method: by, Issuer: str(kit.KeyIdentityIssuer), Subject: str(kit.KeyIdentitySubject)}
	}
	_, sso := sess.Values[kit.KeySignedInUntil]
	if !sso && u.Role != accounts.Customer {
		return controlplane.Identification{Method: controlplane.IdentifiedPassword}
	}
	return controlplane.Identification{Method: controlplane.IdentifiedUnknown}
}

// identifiedWords says how a console user's event names its person as
// identified ("single sign-on", "password and authenticator app"), for the
// timeline beside their name; empty when the event does not say.
func identifiedWords(e controlplane.Event) string {
	by, _ := e.Data["identified_by"].(map[string]any)
	method, _ := by["method"].(string)
	if method == "" || method == controlplane.IdentifiedUnknown {
		return ""
	}
	// Each way is a console.timeline.identified.* message, and each step
	// after the first its own sentence around the ways before, so an
	// installation words them (controlplane.IdentificationWords is the
	// English the receipt's check writes). A way this console does not
	// know is named by its code.
	words := ""
	for i, way := range strings.Split(method, "+") {
		switch way {
		case controlplane.IdentifiedPassword, controlplane.IdentifiedOIDC, controlplane.IdentifiedSlack, "totp", "recovery", "passkey":
			way = say("console.timeline.identified."+way, nil)
		}
		if i == 0 {
			words = way
			continue
		}
		words = say("console.timeline.identified.and", locale.Params{"First": words, "Then": way})
	}
	return words
}

// withPasskey says whether an approval was made with a fresh passkey
// proof (identified_by.step_up), which the timeline's sentence says.
func withPasskey(e controlplane.Event) bool {
	by, _ := e.Data["identified_by"].(map[string]any)
	_, ok := by["step_up"].(map[string]any)
	return ok
}
