package customer

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/custkeys"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// keyDecided is the session key of the requests this browser's session
// decided (confirmed or declined), space separated, newest last: "Use a
// passkey next time" is offered, and taken, only on one of them.
const keyDecided = "customer_decided"

// maxDecided bounds how many decided requests a session remembers.
const maxDecided = 20

// rememberDecided notes that this session decided request id.
func rememberDecided(c echo.Context, id string) error {
	sess := kit.Session(c)
	if sess == nil {
		return nil
	}
	prev, _ := sess.Values[keyDecided].(string)
	ids := append(strings.Fields(prev), id)
	if len(ids) > maxDecided {
		ids = ids[len(ids)-maxDecided:]
	}
	sess.Values[keyDecided] = strings.Join(ids, " ")
	kit.MarkDirty(sess)
	return sess.Save(c.Request(), c.Response())
}

// decidedHere says whether this session decided request id.
func decidedHere(c echo.Context, id string) bool {
	sess := kit.Session(c)
	if sess == nil {
		return false
	}
	prev, _ := sess.Values[keyDecided].(string)
	return slices.Contains(strings.Fields(prev), id)
}

// errDecideFirst refuses adding a passkey on a request this browser has
// not decided: the offer follows a decision made with a proof an
// assistant cannot obtain, in this browser.
func errDecideFirst(ctx context.Context) error {
	return said(&apperr.Error{Kind: apperr.Forbidden, Code: "passkey_after_deciding",
		Message: locale.T(ctx, "receipt.passkey.error.decide_first", nil),
		Hint:    locale.T(ctx, "receipt.passkey.error.decide_first.hint", nil)})
}

// passkeyOwner is the customer this browser proved it is on request :id,
// and how, for their passkeys: a proof in custkeys.RegisterProofs (a
// typed code's session is ErrNotFromACode) that may decide the request
// (as every POST under /requests/:id/ answers: another request's proof is
// "show us it's you for this request", a proof the system does not take
// proof_not_accepted), on a system that takes passkeys.
func (h *Handler) passkeyOwner(c echo.Context) (controlplane.Invocation, controlplane.Task, custkeys.Customer, string, error) {
	inv, task, err := h.customerRequest(c)
	if err != nil {
		return inv, task, custkeys.Customer{}, "", err
	}
	p, _ := kit.CustomerOf(c)
	if err := h.cfg.Confirmations.MayDecide(c.Request().Context(), p, inv, task.CustomerRef); err != nil {
		return inv, task, custkeys.Customer{}, "", err
	}
	if !h.passkeyOffered(inv.System) {
		return inv, task, custkeys.Customer{}, "", custkeys.ErrOff
	}
	if !slices.Contains(custkeys.RegisterProofs, string(p.Proof)) {
		return inv, task, custkeys.Customer{}, "", custkeys.ErrNotFromACode
	}
	return inv, task, custkeys.Customer{System: inv.System, Ref: task.CustomerRef}, string(p.Proof), nil
}

// handleCustomerPasskeys answers GET /requests/:id/passkeys: the
// customer's passkeys for the request's business, each with when it was
// added and last used and a way to remove it.
func (h *Handler) handleCustomerPasskeys(c echo.Context) error {
	inv, _, who, _, err := h.passkeyOwner(c)
	if err != nil {
		return err
	}
	keys, err := h.cfg.Passkeys.Passkeys(c.Request().Context(), who)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	f := h.frameFor(c, inv.System)
	shop := namedShop(f, inv.System)
	v := views.CustomerPasskeysView{Shop: shop, Back: "/requests/" + inv.ID, Limit: h.cfg.Passkeys.Limit(),
		Removed: c.QueryParam("removed") == "1"}
	for _, k := range keys {
		row := views.CustomerPasskeyRow{Name: custkeys.DisplayName(f.loc, k.Name), Added: locale.When(ctx, k.Added, f.zone, f.now), AddedISO: iso(k.Added),
			Remove: "/requests/" + inv.ID + "/passkeys/" + strconv.FormatInt(k.ID, 10) + "/remove"}
		if k.LastUsed != nil {
			row.LastUsed, row.LastUsedISO = locale.When(ctx, *k.LastUsed, f.zone, f.now), iso(*k.LastUsed)
		}
		v.Keys = append(v.Keys, row)
	}
	p := h.page(c, locale.T(ctx, "receipt.passkeys.title", locale.Params{"Shop": shop}), f)
	p.Narrow = true
	return kit.Render(c, http.StatusOK, views.CustomerPasskeysPage(p, v))
}

func iso(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// namedShop is the business's name as a sentence names it: its brand,
// else the system's name, which is data too (never an English stand-in).
func namedShop(f customerFrame, system string) string {
	if f.brand.Name != "" {
		return f.brand.Name
	}
	return system
}

// passkeyOf finds the customer's passkey :key among theirs; another
// customer's, or one removed, is not found.
func (h *Handler) passkeyOf(c echo.Context, who custkeys.Customer) (custkeys.Passkey, error) {
	id, _ := strconv.ParseInt(c.Param("key"), 10, 64)
	keys, err := h.cfg.Passkeys.Passkeys(c.Request().Context(), who)
	if err != nil {
		return custkeys.Passkey{}, err
	}
	for _, k := range keys {
		if k.ID == id {
			return k, nil
		}
	}
	return custkeys.Passkey{}, said(&apperr.Error{Kind: apperr.NotFound, Code: "no_such_passkey",
		Message: locale.T(c.Request().Context(), "receipt.passkey.error.no_such_passkey", nil),
		Hint:    locale.T(c.Request().Context(), "receipt.passkey.error.no_such_passkey.hint", nil)})
}

// handleCustomerPasskeyRemoveConfirm answers GET
// /requests/:id/passkeys/:key/remove: "Remove the passkey …?", whose one
// button posts the removal.
func (h *Handler) handleCustomerPasskeyRemoveConfirm(c echo.Context) error {
	inv, _, who, _, err := h.passkeyOwner(c)
	if err != nil {
		return err
	}
	k, err := h.passkeyOf(c, who)
	if err != nil {
		return err
	}
	csrf, err := h.CSRFToken(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	f := h.frameFor(c, inv.System)
	shop := namedShop(f, inv.System)
	v := views.CustomerPasskeyRemoveView{Shop: shop, Name: custkeys.DisplayName(f.loc, k.Name), Added: locale.When(ctx, k.Added, f.zone, f.now), CSRF: csrf,
		Action: c.Request().URL.Path, Back: "/requests/" + inv.ID + "/passkeys"}
	if k.LastUsed != nil {
		v.LastUsed = locale.When(ctx, *k.LastUsed, f.zone, f.now)
	}
	p := h.page(c, locale.T(ctx, "receipt.passkey_remove.title", locale.Params{"Shop": shop}), f)
	p.Narrow, p.CSRF = true, csrf
	return kit.Render(c, http.StatusOK, views.CustomerPasskeyRemovePage(p, v))
}

// handleCustomerPasskeyRemove answers POST
// /requests/:id/passkeys/:key/remove: the passkey is removed, with its
// audit event and a notice mailed to the customer, and the list says so.
func (h *Handler) handleCustomerPasskeyRemove(c echo.Context) error {
	inv, task, who, proof, err := h.passkeyOwner(c)
	if err != nil {
		return err
	}
	id, _ := strconv.ParseInt(c.Param("key"), 10, 64)
	k, err := h.cfg.Passkeys.Remove(c.Request().Context(), who, proof, task.ID, inv.ID, id)
	if err != nil {
		return err
	}
	h.Log.Info("customer removed a passkey", "system", inv.System, "invocation_id", inv.ID, "proof", proof, "passkey", k.ID)
	return kit.SeeOther(c, "/requests/"+inv.ID+"/passkeys?removed=1")
}

// passkeysLink is the request page's link to the customer's passkeys for
// its business: for a browser that may see them, whose customer has any.
func (h *Handler) passkeysLink(c echo.Context, inv controlplane.Invocation, task controlplane.Task) string {
	p, ok := kit.CustomerOf(c)
	if !ok || !h.passkeyOffered(inv.System) || !slices.Contains(custkeys.RegisterProofs, string(p.Proof)) {
		return ""
	}
	if has, err := h.cfg.Passkeys.Has(c.Request().Context(), custkeys.Customer{System: inv.System, Ref: task.CustomerRef}); err != nil || !has {
		return ""
	}
	return "/requests/" + inv.ID + "/passkeys"
}
