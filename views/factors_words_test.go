package views

import (
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestTheFactorPagesComeFromTheCatalogue: the sign-in's factor step (set
// up a factor, a passkey with recovery codes, an app's code), setting up
// an app (the key shown, then a wrong code), new recovery codes and the
// account's second-factor page (an app with passkeys and new codes, none
// yet, an account of an OpenID provider) write no text of their own: an
// installation's override of every console text shows, and nothing
// else.
func TestTheFactorPagesComeFromTheCatalogue(t *testing.T) {
	installMarkedConsole(t)
	p := Page{Title: "Second factor", User: &User{Name: "Ada", RoleLabel: "agent"}, CSRF: "tok"}
	errs := FieldErrors{"code": "The code is wrong", "password": "The password is wrong"}
	keys := []PasskeyRow{{ID: 1, Name: "Work laptop", Added: "May 1"}, {ID: 2, Name: "Phone", Added: "May 2", LastUsed: "May 3"}}
	data := []string{"Second factor", "Ada", "agent", "The code is wrong", "The password is wrong", "Too many attempts",
		"Work laptop", "Phone", "May 1", "May 2", "May 3", "ABCD EFGH", "Okta", "aaaa-bbbb"}
	for name, c := range map[string]templ.Component{
		"enrol needed":       SignInFactor(p, SignInFactorView{Enrol: true, Passkey: true}),
		"passkey first":      SignInFactor(p, SignInFactorView{Passkey: true, Errors: errs, Error: "Too many attempts"}),
		"app and passkey":    SignInFactor(p, SignInFactorView{TOTP: true, Passkey: true}),
		"app key":            FactorEnrol(p, FactorEnrolView{QR: "data:image/png;base64,x", URI: "otpauth://totp/x", Secret: "ABCD EFGH", Action: "/a", Restart: "/r"}),
		"app wrong code":     FactorEnrol(p, FactorEnrolView{Action: "/a", Restart: "/r", Errors: errs}),
		"recovery codes":     RecoveryCodes(p, RecoveryCodesView{Codes: []string{"aaaa-bbbb"}, Next: "/"}),
		"account, app":       AccountFactors(p, AccountFactorsView{TOTP: true, Since: "May 1", RecoveryLeft: 3, Recovery: true, PasskeysOn: true, Passkeys: keys, NewCodes: []string{"aaaa-bbbb"}}),
		"account, none":      AccountFactors(p, AccountFactorsView{Required: true, Errors: errs, PasskeysOn: true}),
		"account, provider":  AccountFactors(p, AccountFactorsView{Provider: "Okta", PasskeysOn: true, Passkeys: keys, ConfirmURL: "/c"}),
		"provider confirmed": AccountFactors(p, AccountFactorsView{Provider: "Okta", ProviderFresh: true, PasskeysOn: true}),
	} {
		_, html := renderDoc(t, c)
		if strays := consoleStrays(html, data...); len(strays) > 0 {
			t.Errorf("%s writes text of its own:\n%s", name, strings.Join(strays, "\n"))
		}
		if !strings.Contains(html, "⟦") {
			t.Errorf("%s shows no console text", name)
		}
	}
}
