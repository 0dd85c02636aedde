package console

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/locale"
	"countersign/internal/sso"
	"countersign/views"
	"countersign/web/kit"
)

// confirmPath starts a confirmation at the provider (handleSSOConfirm).
const confirmPath = "/sign-in/sso/confirm"

// providerProof says whether a person's account is one the OpenID
// provider manages and, if so, whether the session's last sign-in there
// is fresh: such an account has no console password, so a change to its
// passkeys is confirmed by a new sign-in at the provider instead.
type providerProof struct {
	// Provider is the provider's name, "" for an account of the console's
	// own (which confirms with its password).
	Provider string
	Fresh    bool
}

// providerProofOf reads u's providerProof from the account and the session.
func (h *Handler) providerProofOf(c echo.Context, u accounts.User) (providerProof, error) {
	issuer, err := h.managedBy(c, u.ID)
	if err != nil || issuer == "" {
		return providerProof{}, err
	}
	at, _ := kit.Session(c).Values[kit.KeyProviderAuthAt].(int64)
	fresh := at != 0 && sso.Fresh(time.Unix(at, 0), h.Now())
	return providerProof{Provider: h.cfg.SSO.Name(), Fresh: fresh}, nil
}

// notFresh is the refusal of a passkey change by a provider's account
// whose sign-in there is not fresh, with what to do.
func (pp providerProof) notFresh() *apperr.Error {
	return &apperr.Error{Kind: apperr.Forbidden, Code: "provider_sign_in_not_fresh",
		Message: say("console.rest.provider.not_fresh", locale.Params{"Provider": pp.Provider}),
		Hint:    say("console.rest.provider.not_fresh_hint", locale.Params{"Provider": pp.Provider})}
}

// refuseJSON answers the passkey script of a provider's account whose
// sign-in there is not fresh: what to do, and the account page next,
// where "Confirm with <provider>" is.
func (pp providerProof) refuseJSON(c echo.Context) error {
	e := pp.notFresh()
	return c.JSON(http.StatusForbidden, passkeyReply{Error: e.Message + " " + e.Hint, Next: "/account/factors"})
}

// stale reports whether pp is a provider's account whose sign-in there is
// not fresh.
func (pp providerProof) stale() bool { return pp.Provider != "" && !pp.Fresh }

// handleSSOConfirm answers GET /sign-in/sso/confirm: a provider's account
// confirms it is still its person by signing in at the provider again
// (prompt=login, max_age=0); the callback then marks the session fresh
// and goes back to next (the account page by default). A GET, like the
// sign-in's start: it only sends the person to the provider.
func (h *Handler) handleSSOConfirm(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	pp, err := h.providerProofOf(c, u)
	if err != nil {
		return err
	}
	if pp.Provider == "" {
		return refusal(apperr.NotFound, "not_sso_account", nil)
	}
	next := kit.SafeNext(c.QueryParam("next"))
	if next == "/" {
		next = "/account/factors"
	}
	browser := ssoSecret()
	to, err := h.cfg.SSO.BeginConfirm(c.Request().Context(), browser, next)
	if err != nil {
		return err
	}
	h.setSSOCookie(c, browser, 600)
	return c.Redirect(http.StatusFound, to)
}

// confirmed marks the session of a confirmation's person fresh (the
// provider's sign-in is new, and so is its expiry) and goes on.
func (h *Handler) confirmed(c echo.Context, signed sso.SignedIn) error {
	sess := kit.Session(c)
	if id, _ := sess.Values[kit.KeyUserID].(int64); id != signed.User.ID {
		// Finish compared the provider's person with the session's; an
		// account that is not the session's cannot come back here.
		return apperr.New(apperr.Internal, "a confirmation came back for another account")
	}
	sess.Values[kit.KeyProviderAuthAt] = signed.AuthAt.Unix()
	sess.Values[kit.KeySignedInUntil] = signed.Expiry.Unix()
	kit.MarkDirty(sess)
	kit.SetFlash(c, locale.Console("console.flash.provider_confirmed", locale.Params{"Provider": h.cfg.SSO.Name()}), false)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	h.Log.Info("confirmed at the provider", "user_id", signed.User.ID, "issuer", h.cfg.SSO.Issuer(), "subject", signed.Subject)
	return kit.SeeOther(c, signed.Next)
}

// renderConfirmRefused shows a refused confirmation: the person stays
// signed in as before, and the page says why and leads back to the
// account page.
func (h *Handler) renderConfirmRefused(c echo.Context, e *apperr.Error) error {
	status := kit.StatusOf[e.Kind]
	p := h.Page(c, title("not_confirmed", nil))
	p.Narrow = true
	return kit.Render(c, status, views.ErrorPage(p, views.ErrorView{Status: status, Title: title("not_confirmed", nil),
		Message: e.Message, Hint: e.Hint, Back: "/account/factors"}))
}
