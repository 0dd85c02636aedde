package console

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/sso"
	"countersign/views"
	"countersign/web/kit"
)

// ssoBrowserCookie holds the secret that binds a sign-in begun at the
// provider to the browser that began it; the callback must bring it.
const ssoBrowserCookie = "cs_sso"

// ssoCookiePath limits the cookie to the two routes that use it.
const ssoCookiePath = "/sign-in/sso"

// handleSSOStart answers GET /sign-in/sso: it sends the browser to the
// OpenID provider with a fresh state, nonce and PKCE challenge. A GET is
// enough: it only starts a sign-in that the person finishes at the
// provider, and what decides is the callback's state.
func (h *Handler) handleSSOStart(c echo.Context) error {
	if h.cfg.SSO == nil {
		return refusal(apperr.NotFound, "sso_off", nil)
	}
	browser := ssoSecret()
	to, err := h.cfg.SSO.Begin(c.Request().Context(), browser, kit.SafeNext(c.QueryParam("next")))
	if err != nil {
		return err
	}
	h.setSSOCookie(c, browser, 600)
	return c.Redirect(http.StatusFound, to)
}

// handleSSOCallback answers GET /sign-in/sso/callback, where the provider
// sends the browser back with a code and the state. The protocol makes it
// a GET from another site, so it carries no CSRF token: the state, used
// once and bound to this browser's cookie, stands in for it. A refused
// sign-in shows the sign-in page with what went wrong and what to do.
func (h *Handler) handleSSOCallback(c echo.Context) error {
	if h.cfg.SSO == nil {
		return refusal(apperr.NotFound, "sso_off", nil)
	}
	var browser string
	if ck, err := c.Cookie(ssoBrowserCookie); err == nil {
		browser = ck.Value
	}
	h.setSSOCookie(c, "", -1)
	q := c.QueryParams()
	var err error
	if q.Get("error") != "" {
		err = sso.ProviderRefused(q.Get("error") + ": " + q.Get("error_description"))
	}
	var signed sso.SignedIn
	if err == nil {
		signed, err = h.cfg.SSO.Finish(c.Request().Context(), browser, q.Get("state"), q.Get("code"), sessionPerson(c))
	}
	if e, ok := apperr.As(err); ok && (e.Kind == apperr.Unauthenticated || e.Kind == apperr.Forbidden) {
		h.Log.Warn("single sign-on refused", "code", e.Code, "error", err)
		if sso.IsConfirmRefusal(err) {
			return h.renderConfirmRefused(c, e)
		}
		form := views.SignInForm{Error: e.Message + " " + e.Hint, Next: "/"}
		return h.renderSignIn(c, kit.StatusOf[e.Kind], form, views.Flash{})
	}
	if err != nil {
		return err
	}
	if signed.Confirmed {
		return h.confirmed(c, signed)
	}
	sess := kit.Session(c)
	if err := h.Sessions.Regenerate(c.Request().Context(), sess); err != nil {
		return err
	}
	sess.Values[kit.KeyUserID] = signed.User.ID
	sess.Values[kit.KeyIdentifiedBy] = "oidc"
	sess.Values[kit.KeySignedInUntil] = signed.Expiry.Unix()
	sess.Values[kit.KeyIdentityIssuer] = h.cfg.SSO.Issuer()
	sess.Values[kit.KeyIdentitySubject] = signed.Subject
	if !signed.AuthAt.IsZero() {
		sess.Values[kit.KeyProviderAuthAt] = signed.AuthAt.Unix()
	}
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	h.Sessions.DropAnonymousCSRF(c.Request(), c.Response())
	h.Log.Info("signed in", "user_id", signed.User.ID, "role", signed.User.Role, "identified_by", "oidc",
		"issuer", h.cfg.SSO.Issuer(), "subject", signed.Subject, "new_account", signed.Created)
	return kit.SeeOther(c, signed.Next)
}

// sessionPerson is the provider's person the session is signed in as
// (zero when it names none).
func sessionPerson(c echo.Context) sso.Person {
	sess := kit.Session(c)
	if _, ok := sess.Values[kit.KeyUserID].(int64); !ok {
		return sso.Person{}
	}
	issuer, _ := sess.Values[kit.KeyIdentityIssuer].(string)
	subject, _ := sess.Values[kit.KeyIdentitySubject].(string)
	return sso.Person{Issuer: issuer, Subject: subject}
}

func (h *Handler) setSSOCookie(c echo.Context, value string, maxAge int) {
	c.SetCookie(&http.Cookie{Name: ssoBrowserCookie, Value: value, Path: ssoCookiePath, MaxAge: maxAge, HttpOnly: true,
		Secure: h.TLS || c.Scheme() == "https", SameSite: http.SameSiteLaxMode})
}

func ssoSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
