package kit

import (
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/confirmation"
)

// Session values of a customer who proved who they are on a link page.
// They are not a console account: they open and decide only the request
// the proof was made on (and its re-quotes), never the customer's others.
const (
	keyProvedCustomer = "proved_customer"
	keyCustomerProof  = "customer_proof"
	// keyProvedFor and keyProvedSystem name the request the proof was made
	// on: its link's invocation and that invocation's system.
	keyProvedFor    = "proved_for"
	keyProvedSystem = "proved_system"
	// keyProvedLocale is the business's word for the customer's language
	// that came with the proof (an assertion's "loc").
	keyProvedLocale = "proved_locale"
)

// CustomerOf returns the customer this request acts for and what they
// proved: a signed-in customer account (its e-mail; it spans their
// requests), or a code or an assertion made on one link page (it covers
// that request only). Staff accounts act for no customer, and holding a
// link is no proof.
func CustomerOf(c echo.Context) (confirmation.Proved, bool) {
	if u, signedIn := CurrentUser(c); signedIn {
		if u.Role == accounts.Customer {
			return confirmation.Proved{CustomerRef: u.Email, Proof: confirmation.ProofAccount}, true
		}
		return confirmation.Proved{}, false
	}
	sess := Session(c)
	if sess == nil || sess.IsNew {
		return confirmation.Proved{}, false
	}
	var p confirmation.Proved
	p.CustomerRef, _ = sess.Values[keyProvedCustomer].(string)
	proof, _ := sess.Values[keyCustomerProof].(string)
	p.InvocationID, _ = sess.Values[keyProvedFor].(string)
	p.System, _ = sess.Values[keyProvedSystem].(string)
	p.Locale, _ = sess.Values[keyProvedLocale].(string)
	kind, known := confirmation.ParseProof(proof)
	// A link's session never holds an account's proof, and a code or an
	// assertion always names its request.
	if p.CustomerRef == "" || !known || kind == confirmation.ProofAccount || p.InvocationID == "" {
		return confirmation.Proved{}, false
	}
	p.Proof = kind
	return p, true
}

// KeepProof records in sess what a customer proved on a link page, for
// CustomerOf to read back on their next requests.
func KeepProof(sess *sessions.Session, p confirmation.Proved) {
	sess.Values[keyProvedCustomer] = p.CustomerRef
	sess.Values[keyCustomerProof] = string(p.Proof)
	sess.Values[keyProvedFor] = p.InvocationID
	sess.Values[keyProvedSystem] = p.System
	if p.Locale != "" {
		sess.Values[keyProvedLocale] = p.Locale
	}
}
