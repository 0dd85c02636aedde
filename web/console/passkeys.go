package console

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/factors"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// keyCeremony is the session key of the WebAuthn ceremony under way: the
// id under whose hash the server keeps its challenge (factors.Ceremony).
// The session holds one at a time; beginning another replaces it.
const keyCeremony = "webauthn_ceremony"

// maxPasskeyAnswer bounds a passkey answer's JSON body.
const maxPasskeyAnswer = 64 << 10

// passkeyAnswer is what static/passkey.js posts after navigator.credentials:
// the credential in its JSON form and, at registration, the passkey's name.
type passkeyAnswer struct {
	Name string `json:"name"`
	// Password is the person's current password, asked again before a
	// passkey is added.
	Password   string          `json:"password"`
	Credential json.RawMessage `json:"credential"`
}

// passkeyReply is the JSON the script reads: where to go next, or what
// went wrong (and on which field).
type passkeyReply struct {
	Next  string `json:"next,omitempty"`
	Error string `json:"error,omitempty"`
	Field string `json:"field,omitempty"`
}

// beginCeremony keeps the ceremony's id in the session and answers its
// options.
func (h *Handler) beginCeremony(c echo.Context, id string, options json.RawMessage) error {
	sess := kit.Session(c)
	sess.Values[keyCeremony] = id
	kit.MarkDirty(sess)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, options)
}

// takeCeremony reads and forgets the session's ceremony id and the answer
// the body carries.
func (h *Handler) takeCeremony(c echo.Context) (string, passkeyAnswer, error) {
	sess := kit.Session(c)
	id, _ := sess.Values[keyCeremony].(string)
	delete(sess.Values, keyCeremony)
	kit.MarkDirty(sess)
	a, err := readPasskeyAnswer(c)
	return id, a, err
}

// readPasskeyAnswer reads the JSON body static/passkey.js posts.
func readPasskeyAnswer(c echo.Context) (passkeyAnswer, error) {
	var a passkeyAnswer
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxPasskeyAnswer))
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return a, apperr.InvalidFields(map[string]string{"passkey": say("console.rest.passkey.unreadable", nil)})
	}
	return a, nil
}

// passkeyRefusal answers a refused ceremony as JSON for the script, with
// the status of its kind; other errors go to the error page.
func passkeyRefusal(c echo.Context, err error) error {
	e, ok := apperr.As(err)
	switch {
	case !ok:
		return err
	case e.Kind == apperr.LimitReached && e.RetryAfterSeconds > 0:
		c.Response().Header().Set("Retry-After", itoa(e.RetryAfterSeconds))
	case e.Kind != apperr.Invalid && e.Kind != apperr.NotFound && e.Kind != apperr.Conflict && e.Kind != apperr.LimitReached:
		return err
	}
	r := passkeyReply{Error: e.Message}
	if e.Hint != "" {
		r.Error += " " + e.Hint
	}
	for f, msg := range e.Fields {
		r.Field = f
		if f == "name" || f == "password" {
			r.Error = msg
		}
	}
	return c.JSON(kit.StatusOf[e.Kind], r)
}

// handlePasskeyRegisterBegin answers POST /account/factors/passkey/begin:
// after the person's current password again (counted in the password
// throttle, as for an authenticator app), the creation options for a new
// passkey, so a borrowed session cannot add its own. An account the
// OpenID provider manages has no password here: its session must have
// signed in at the provider in the last five minutes instead.
func (h *Handler) handlePasskeyRegisterBegin(c echo.Context) error {
	if h.cfg.Factors == nil {
		return factorsOff()
	}
	u, _ := kit.CurrentUser(c)
	pp, err := h.providerProofOf(c, u)
	if err != nil {
		return err
	}
	if pp.stale() {
		return pp.refuseJSON(c)
	}
	a, err := readPasskeyAnswer(c)
	if err == nil && pp.Provider == "" {
		err = h.Accounts.ConfirmPassword(c.Request().Context(), u.ID, a.Password, c.RealIP())
	}
	if err != nil {
		return passkeyRefusal(c, err)
	}
	cer, err := h.cfg.Factors.BeginPasskeyRegistration(c.Request().Context(), u)
	if err != nil {
		return passkeyRefusal(c, err)
	}
	return h.beginCeremony(c, cer.ID, cer.Options)
}

// handlePasskeyRegister answers POST /account/factors/passkey: the
// browser's new credential, verified and kept under the name given. A
// provider's account needs its fresh sign-in there still (the begin's
// check alone would leave the ceremony's five minutes after it).
func (h *Handler) handlePasskeyRegister(c echo.Context) error {
	if h.cfg.Factors == nil {
		return factorsOff()
	}
	u, _ := kit.CurrentUser(c)
	pp, err := h.providerProofOf(c, u)
	if err != nil {
		return err
	}
	if pp.stale() {
		return pp.refuseJSON(c)
	}
	id, a, err := h.takeCeremony(c)
	var codes []string
	if err == nil {
		codes, err = h.cfg.Factors.FinishPasskeyRegistration(c.Request().Context(), u, identificationOf(c, u), id, a.Name, a.Credential)
	}
	if err != nil {
		if saveErr := kit.Session(c).Save(c.Request(), c.Response()); saveErr != nil {
			return saveErr
		}
		return passkeyRefusal(c, err)
	}
	h.Log.Info("passkey added", "user_id", u.ID)
	if pp.Provider != "" {
		// The provider signs this person in: recovery codes, which stand
		// in for a passkey after a console password, are of no use to
		// them, so none are shown.
		kit.SetFlash(c, locale.Console("console.flash.passkey_added_for_approvals", locale.Params{"Name": a.Name}), false)
		return c.JSON(http.StatusOK, passkeyReply{Next: "/account/factors"})
	}
	kit.SetFlash(c, locale.Console("console.flash.passkey_added", locale.Params{"Name": a.Name}), false)
	if err := h.keepNewCodes(c, u.ID, codes); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, passkeyReply{Next: "/account/factors"})
}

// handlePasskeyRemove answers POST /account/factors/passkey/:id/remove:
// the person's passkey goes, unless it is the last factor their role
// requires (the page then says so). A provider's account needs a fresh
// sign-in there, as for adding one.
func (h *Handler) handlePasskeyRemove(c echo.Context) error {
	if h.cfg.Factors == nil {
		return factorsOff()
	}
	u, _ := kit.CurrentUser(c)
	pp, err := h.providerProofOf(c, u)
	if err != nil {
		return err
	}
	if pp.stale() {
		e := pp.notFresh()
		kit.SetFlash(c, e.Message+" "+e.Hint, true)
		return kit.SeeOther(c, "/account/factors")
	}
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return refusal(apperr.NotFound, "no_passkey", nil)
	}
	err = h.cfg.Factors.RemovePasskey(c.Request().Context(), u, identificationOf(c, u), id)
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Conflict {
		kit.SetFlash(c, e.Message+" "+e.Hint, true)
		return kit.SeeOther(c, "/account/factors")
	}
	if err != nil {
		return err
	}
	h.Log.Info("passkey removed", "user_id", u.ID, "factor_id", id)
	kit.SetFlash(c, locale.Console("console.flash.passkey_removed", nil), false)
	return kit.SeeOther(c, "/account/factors")
}

// handlePasskeySignInBegin answers POST /sign-in/factor/passkey/begin: the
// request options for the passkeys of the person whose sign-in waits.
func (h *Handler) handlePasskeySignInBegin(c echo.Context) error {
	u, _, ok, err := h.passkeyWaiting(c)
	if !ok {
		return err
	}
	cer, err := h.cfg.Factors.BeginPasskeySignIn(c.Request().Context(), u)
	if err != nil {
		return passkeyRefusal(c, err)
	}
	return h.beginCeremony(c, cer.ID, cer.Options)
}

// handlePasskeySignIn answers POST /sign-in/factor/passkey: a right
// assertion signs the waiting person in, identified by password+passkey.
func (h *Handler) handlePasskeySignIn(c echo.Context) error {
	u, pending, ok, err := h.passkeyWaiting(c)
	if !ok {
		return err
	}
	id, a, err := h.takeCeremony(c)
	if err == nil {
		err = h.cfg.Factors.FinishPasskeySignIn(c.Request().Context(), u, id, a.Credential, c.RealIP())
	}
	if err != nil {
		if saveErr := kit.Session(c).Save(c.Request(), c.Response()); saveErr != nil {
			return saveErr
		}
		return passkeyRefusal(c, err)
	}
	if err := h.signIn(c, u, pending.By+"+passkey"); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, passkeyReply{Next: kit.SafeNext(pending.Next)})
}

// handlePasskeyEnrolBegin answers POST /sign-in/factor/passkey/enrol/begin:
// a person whose role requires a factor they do not have may set up a
// passkey instead of an app; the creation options for it (the password
// was given at the sign-in's first step).
func (h *Handler) handlePasskeyEnrolBegin(c echo.Context) error {
	u, _, ok, err := h.enrollingUser(c)
	if !ok {
		return err
	}
	cer, err := h.cfg.Factors.BeginPasskeyRegistration(c.Request().Context(), u)
	if err != nil {
		return passkeyRefusal(c, err)
	}
	return h.beginCeremony(c, cer.ID, cer.Options)
}

// handlePasskeyEnrol answers POST /sign-in/factor/passkey/enrol: the new
// passkey, verified and kept, signs the waiting person in as
// password+passkey, as a confirmed app's first code does.
func (h *Handler) handlePasskeyEnrol(c echo.Context) error {
	u, pending, ok, err := h.enrollingUser(c)
	if !ok {
		return err
	}
	id, a, err := h.takeCeremony(c)
	var codes []string
	if err == nil {
		codes, err = h.cfg.Factors.FinishPasskeyRegistration(c.Request().Context(), u,
			controlplane.Identification{Method: pending.By}, id, a.Name, a.Credential)
	}
	if err != nil {
		if saveErr := kit.Session(c).Save(c.Request(), c.Response()); saveErr != nil {
			return saveErr
		}
		return passkeyRefusal(c, err)
	}
	h.Log.Info("passkey added", "user_id", u.ID, "at", "sign-in")
	if err := h.signIn(c, u, pending.By+"+passkey"); err != nil {
		return err
	}
	next := kit.SafeNext(pending.Next)
	if len(codes) > 0 {
		// The account page shows them once, then the person goes on.
		if err := h.keepNewCodes(c, u.ID, codes); err != nil {
			return err
		}
		next = "/account/factors"
	}
	return c.JSON(http.StatusOK, passkeyReply{Next: next})
}

// enrollingUser is the person whose sign-in waits for a factor they must
// set up; when there is none it answered (ok false) with what to do.
func (h *Handler) enrollingUser(c echo.Context) (accounts.User, kit.PendingFactor, bool, error) {
	u, pending, ok, err := h.passkeyWaiting(c)
	if !ok {
		return u, pending, false, err
	}
	step, err := h.cfg.Factors.StepAfterPassword(c.Request().Context(), u)
	if err != nil {
		return u, pending, false, err
	}
	if step != factors.EnrolStep {
		return u, pending, false, c.JSON(http.StatusConflict, passkeyReply{Error: say("console.rest.passkey.has_factor", nil), Next: kit.FactorPath})
	}
	return u, pending, true, nil
}

// passkeyWaiting is the person whose sign-in waits for a passkey; when
// there is none (or the wait ran out) it has answered the script itself
// and ok is false.
func (h *Handler) passkeyWaiting(c echo.Context) (accounts.User, kit.PendingFactor, bool, error) {
	u, pending, ok, err := h.pendingUser(c)
	if err != nil {
		return u, pending, false, err
	}
	if !ok {
		return u, pending, false, c.JSON(http.StatusUnauthorized, passkeyReply{Error: say("console.rest.passkey.waited_too_long", nil), Next: "/sign-in"})
	}
	return u, pending, true, nil
}

// passkeyRows is the person's passkeys as the account page lists them.
func (h *Handler) passkeyRows(c echo.Context, u accounts.User) ([]views.PasskeyRow, error) {
	keys, err := h.cfg.Factors.Passkeys(c.Request().Context(), u.ID)
	if err != nil {
		return nil, err
	}
	rows := make([]views.PasskeyRow, len(keys))
	for i, k := range keys {
		rows[i] = views.PasskeyRow{ID: k.FactorID, Name: k.Name, Added: k.CreatedAt.In(h.Now().Location()).Format("2 Jan 2006")}
		if k.LastUsedAt != nil {
			rows[i].LastUsed = k.LastUsedAt.In(h.Now().Location()).Format("2 Jan 2006 15:04")
		}
	}
	return rows, nil
}
