package customer

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"countersign/internal/controlplane"
	"countersign/internal/custkeys"
	"countersign/views"
	"countersign/web/kit"
)

// registrant is the customer this browser proved it is on request :id,
// and how, when they may add a passkey there: as for their passkeys
// (passkeyOwner: never a typed code's session), and only on a request this
// session decided (errDecideFirst).
func (h *Handler) registrant(c echo.Context) (controlplane.Invocation, controlplane.Task, custkeys.Customer, string, error) {
	inv, task, who, proof, err := h.passkeyOwner(c)
	if err != nil {
		return inv, task, who, proof, err
	}
	if !decidedHere(c, inv.ID) {
		return inv, task, who, proof, errDecideFirst(c.Request().Context())
	}
	return inv, task, who, proof, nil
}

// handlePasskeyRegisterBegin answers POST /requests/:id/passkey/begin:
// the creation options of a passkey for this business, only for a browser
// that proved the customer with the mail's link, the business's assertion
// or their account — never with a typed code (custkeys refuses it, 403).
func (h *Handler) handlePasskeyRegisterBegin(c echo.Context) error {
	inv, _, who, proof, err := h.registrant(c)
	if err != nil {
		return h.passkeyRefusal(c, err, "")
	}
	cer, err := h.cfg.Passkeys.BeginRegistration(c.Request().Context(), who, inv.ID, proof)
	if err != nil {
		return h.passkeyRefusal(c, err, "")
	}
	sess := kit.Session(c)
	sess.Values[keyPasskeyCeremony] = cer.ID
	kit.MarkDirty(sess)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, cer.Options)
}

// handlePasskeyRegister answers POST /requests/:id/passkey: the browser's
// new credential, verified and kept for this customer of this business.
func (h *Handler) handlePasskeyRegister(c echo.Context) error {
	inv, task, who, proof, err := h.registrant(c)
	if err != nil {
		return h.passkeyRefusal(c, err, "")
	}
	sess := kit.Session(c)
	id, _ := sess.Values[keyPasskeyCeremony].(string)
	delete(sess.Values, keyPasskeyCeremony)
	kit.MarkDirty(sess)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	post, err := readPasskeyPost(c)
	if err == nil {
		err = h.cfg.Passkeys.FinishRegistration(c.Request().Context(), custkeys.Registration{C: who, InvocationID: inv.ID, TaskID: task.ID,
			Proof: proof, Name: custkeys.BrowserName(c.Request().UserAgent())}, id, post.Credential)
	}
	if err != nil {
		return h.passkeyRefusal(c, err, "")
	}
	sess.Values[keyPasskeyAdded] = inv.ID
	kit.MarkDirty(sess)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	h.Log.Info("customer added a passkey", "system", inv.System, "invocation_id", inv.ID, "proof", proof)
	return c.JSON(http.StatusOK, passkeyReply{Next: "/requests/" + inv.ID + "?passkey=added"})
}

// keyPasskeyAdded is the session key of the request on whose page this
// browser last added a passkey: the page says "added" only there, never
// because its address says so.
const keyPasskeyAdded = "customer_passkey_added"

// passkeyOfferView is "Use a passkey next time" on a request's page: after
// this session decided it (the request no longer awaits the customer), for
// a browser that proved the customer in a way a passkey may be added from,
// who has none for this business yet; nil otherwise.
func (h *Handler) passkeyOfferView(c echo.Context, inv controlplane.Invocation, task controlplane.Task, v views.CustomerRequestView, shop string) *views.CustomerPasskeyOfferView {
	p, ok := kit.CustomerOf(c)
	if !ok || v.Decide || !decidedHere(c, inv.ID) || !h.passkeyOffered(inv.System) || !slices.Contains(custkeys.RegisterProofs, string(p.Proof)) {
		return nil
	}
	offer := &views.CustomerPasskeyOfferView{Begin: "/requests/" + inv.ID + "/passkey/begin", Finish: "/requests/" + inv.ID + "/passkey",
		CSRF: v.CSRF, Shop: shop}
	has, err := h.cfg.Passkeys.Has(c.Request().Context(), custkeys.Customer{System: inv.System, Ref: task.CustomerRef})
	switch {
	case err != nil:
		return nil
	case has && c.QueryParam("passkey") == "added" && addedHere(c, inv.ID):
		offer.Added = true
	case has:
		return nil
	}
	return offer
}

// addedHere says whether this browser added a passkey on request id's page.
func addedHere(c echo.Context, id string) bool {
	sess := kit.Session(c)
	if sess == nil {
		return false
	}
	added, _ := sess.Values[keyPasskeyAdded].(string)
	return added == id
}
