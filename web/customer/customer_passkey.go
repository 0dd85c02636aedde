package customer

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/confirmation"
	"countersign/internal/consent"
	"countersign/internal/controlplane"
	"countersign/internal/custkeys"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// keyPasskeyCeremony is the session key of the customer's passkey
// ceremony under way (custkeys.Ceremony's id); beginning another replaces
// it.
const keyPasskeyCeremony = "customer_passkey_ceremony"

// maxPasskeyAnswer bounds a passkey answer's JSON body.
const maxPasskeyAnswer = 64 << 10

// passkeyPost is what static/passkey.js posts: the page's fields (the
// decision, and the version and quote digest the page showed) and, at the
// finish, the credential in its JSON form.
type passkeyPost struct {
	Decision   string          `json:"decision"`
	Version    string          `json:"version"`
	Digest     string          `json:"digest"`
	Credential json.RawMessage `json:"credential"`
}

// passkeyReply is the JSON the script reads: where to go next, or what
// went wrong.
type passkeyReply struct {
	Next  string `json:"next,omitempty"`
	Error string `json:"error,omitempty"`
}

func readPasskeyPost(c echo.Context) (passkeyPost, error) {
	var p passkeyPost
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxPasskeyAnswer))
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return p, said(&apperr.Error{Kind: apperr.Invalid, Code: "passkey_unreadable",
			Message: locale.T(c.Request().Context(), "receipt.passkey.error.unreadable", nil),
			Fields:  map[string]string{"passkey": locale.T(c.Request().Context(), "receipt.passkey.error.unreadable", nil)}})
	}
	return p, nil
}

// passkeyRefusal answers a refusal as JSON for the script, with the
// status of its kind, in the customer's language where it is known
// (refusalText); next, when set, is where the script goes after showing
// it. Other errors go to the error page.
func (h *Handler) passkeyRefusal(c echo.Context, err error, next string) error {
	e, ok := apperr.As(err)
	if !ok || e.Kind == apperr.Internal {
		return err
	}
	return c.JSON(kit.StatusOf[e.Kind], passkeyReply{Error: h.refusalOf(c, err).text(), Next: next})
}

// shownDigest is consent.QuoteDigest of inv's quote as stored, which is
// all the page is built from and what the control plane compares.
func shownDigest(inv controlplane.Invocation) ([]byte, error) {
	return consent.QuoteDigest(inv.QuoteJSON)
}

// errPageOld answers a passkey post whose page showed another version or
// quote than the request has now: the customer decides what they saw, so
// the page is shown again first.
func errPageOld(ctx context.Context) error {
	return said(&apperr.Error{Kind: apperr.Conflict, Code: "passkey_page_old",
		Message: locale.T(ctx, "receipt.passkey.error.page_old", nil), Hint: locale.T(ctx, "receipt.passkey.error.page_old.hint", nil)})
}

// passkeyOffered says whether inv's system takes passkeys on this console.
func (h *Handler) passkeyOffered(system string) bool {
	return h.cfg.Passkeys.On() && h.cfg.Confirmations != nil &&
		slices.Contains(h.cfg.Confirmations.Accepts(system), confirmation.ProofPasskey)
}

// passkeyDecision loads the link's request now and checks that the page
// posted showed it (version and quote digest) and that it still awaits
// its customer; it returns the link, the request and what the passkey
// signs. Nothing of the post but the decision goes into what is signed.
func (h *Handler) passkeyDecision(c echo.Context, post passkeyPost) (confirmation.Opened, controlplane.Invocation, custkeys.Decision, error) {
	ctx := c.Request().Context()
	var d custkeys.Decision
	if _, ok := kit.CurrentUser(c); ok {
		return confirmation.Opened{}, controlplane.Invocation{}, d, said(&apperr.Error{Kind: apperr.Forbidden, Code: "passkey_not_for_staff",
			Message: locale.T(ctx, "receipt.passkey.error.signed_in", nil)})
	}
	o, err := h.cfg.Confirmations.Open(ctx, c.Param("token"))
	if _, ok := confirmation.AsLinkError(err); ok {
		return o, controlplane.Invocation{}, d, said(&apperr.Error{Kind: apperr.NotFound, Code: "link_closed",
			Message: locale.T(ctx, "receipt.passkey.error.link_closed", nil)})
	}
	if err != nil {
		return o, controlplane.Invocation{}, d, err
	}
	inv, err := h.cfg.Control.Invocation(ctx, o.InvocationID)
	if err != nil {
		return o, inv, d, err
	}
	if !h.passkeyOffered(inv.System) {
		return o, inv, d, custkeys.ErrOff
	}
	if inv.State != controlplane.AwaitingConfirmation || h.expired(inv) {
		return o, inv, d, confirmation.NothingToDecide()
	}
	digest, err := shownDigest(inv)
	if err != nil {
		return o, inv, d, err
	}
	if post.Version != strconv.Itoa(int(inv.Version)) || post.Digest != hex.EncodeToString(digest) {
		return o, inv, d, errPageOld(ctx)
	}
	if post.Decision != consent.Confirm && post.Decision != consent.Decline {
		return o, inv, d, said(&apperr.Error{Kind: apperr.Invalid, Code: "passkey_decision",
			Message: locale.T(ctx, "receipt.passkey.error.decision", nil)})
	}
	return o, inv, custkeys.Decision{InvocationID: inv.ID, QuoteVersion: int64(inv.Version), QuoteDigest: digest, Decision: post.Decision}, nil
}

// handlePasskeyDecideBegin answers POST /c/:token/passkey/begin: the
// assertion options of a decision with the customer's passkey, whose
// challenge is the decision's (custkeys.BeginDecision).
func (h *Handler) handlePasskeyDecideBegin(c echo.Context) error {
	if h.cfg.Confirmations == nil {
		return h.passkeyRefusal(c, custkeys.ErrOff, "")
	}
	post, err := readPasskeyPost(c)
	if err != nil {
		return h.passkeyRefusal(c, err, "")
	}
	o, _, d, err := h.passkeyDecision(c, post)
	if err != nil {
		return h.passkeyRefusal(c, err, confirmation.PathPrefix+c.Param("token"))
	}
	cer, err := h.cfg.Passkeys.BeginDecision(c.Request().Context(), custkeys.Customer{System: o.System, Ref: o.CustomerRef}, d)
	if err != nil {
		return h.passkeyRefusal(c, err, "")
	}
	sess := kit.Session(c)
	if sess.IsNew {
		// A visitor's first session keeps the token their page's forms
		// carry (their CSRF cookie's), so the finish's post, from the same
		// page, is taken.
		tok, err := h.CSRFToken(c)
		if err != nil {
			return err
		}
		sess.Values[kit.KeyCSRF] = tok
	}
	sess.Values[keyPasskeyCeremony] = cer.ID
	kit.MarkDirty(sess)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, cer.Options)
}

// handlePasskeyDecide answers POST /c/:token/passkey: the passkey's
// answer, checked against the request as loaded now and the decision
// posted (custkeys.FinishDecision). A right answer proves the customer for
// this request (a new session, as a code or an assertion would) and
// decides it in the control plane's one call, with the version and quote
// digest shown and the assertion as the decision's evidence.
func (h *Handler) handlePasskeyDecide(c echo.Context) error {
	if h.cfg.Confirmations == nil {
		return h.passkeyRefusal(c, custkeys.ErrOff, "")
	}
	ctx := c.Request().Context()
	sess := kit.Session(c)
	id, _ := sess.Values[keyPasskeyCeremony].(string)
	delete(sess.Values, keyPasskeyCeremony)
	kit.MarkDirty(sess)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	post, err := readPasskeyPost(c)
	if err != nil {
		return h.passkeyRefusal(c, err, "")
	}
	o, inv, d, err := h.passkeyDecision(c, post)
	if err != nil {
		return h.passkeyRefusal(c, err, confirmation.PathPrefix+c.Param("token"))
	}
	a, err := h.cfg.Passkeys.FinishDecision(ctx, custkeys.Customer{System: o.System, Ref: o.CustomerRef}, id, post.Credential, d)
	if err != nil {
		return h.passkeyRefusal(c, err, "")
	}
	// The decision records the language of the link's page it was made
	// on, decided as that page decided it, before the proof's session
	// reads the customer record afresh.
	h.localiseLink(c, o)
	verb := controlplane.CustomerConfirm
	if d.Decision == consent.Decline {
		verb = controlplane.CustomerDecline
	}
	decision := controlplane.CustomerDecision{InvocationID: inv.ID, Verb: verb, QuoteVersion: inv.Version,
		QuoteDigest: d.QuoteDigest, Passkey: &a}
	decision.Locale, decision.LocaleFrom = decidedIn(c)
	if err := h.startCustomerSession(c, o, confirmation.ProofPasskey); err != nil {
		return err
	}
	done, err := h.cfg.Confirmations.Decide(ctx, confirmation.ProvedOn(o, confirmation.ProofPasskey), decision)
	if err != nil {
		return h.passkeyRefusal(c, err, "/requests/"+inv.ID)
	}
	h.Log.Info("customer decided with a passkey", "invocation_id", inv.ID, "decision", d.Decision, "done", done.Done)
	return c.JSON(http.StatusOK, passkeyReply{Next: "/requests/" + done.Invocation.ID})
}

// passkeyDecideView is the link page's offer to decide with a passkey, for
// a customer who has one for this business; nil otherwise.
func (h *Handler) passkeyDecideView(c echo.Context, o confirmation.Opened, inv controlplane.Invocation, path, csrf string, v views.CustomerRequestView) *views.CustomerPasskeyDecideView {
	if !h.passkeyOffered(inv.System) || !v.Decide {
		return nil
	}
	has, err := h.cfg.Passkeys.Has(c.Request().Context(), custkeys.Customer{System: o.System, Ref: o.CustomerRef})
	if err != nil || !has {
		return nil
	}
	digest, err := shownDigest(inv)
	if err != nil {
		return nil
	}
	return &views.CustomerPasskeyDecideView{Path: path, CSRF: csrf, Version: strconv.Itoa(int(inv.Version)),
		Digest: hex.EncodeToString(digest), OnHold: v.OnHold != "", ConfirmLabel: v.ConfirmLabel, DeclineLabel: v.DeclineLabel}
}
