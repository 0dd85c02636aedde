package console

import (
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// handleAdminAssistants answers GET /admin/assistants; right after a key
// was issued it shows that key, once.
func (h *Handler) handleAdminAssistants(c echo.Context) error {
	v := views.AdminAssistantsView{Form: views.NewAssistantForm{EnableAll: true}, NewKey: popKeyFlash(c)}
	if v.NewKey != nil {
		c.Response().Header().Set("Cache-Control", "no-store")
	}
	return h.renderAdminAssistants(c, http.StatusOK, v)
}

// handleAdminAssistantCreate answers POST /admin/assistants; with
// enable_all, every action of the connected systems is turned on.
func (h *Handler) handleAdminAssistantCreate(c echo.Context) error {
	ctx := c.Request().Context()
	form := views.NewAssistantForm{Name: c.FormValue("name"), EnableAll: c.FormValue("enable_all") == "on"}
	admin, _ := kit.CurrentUser(c)
	a, err := h.cfg.Assistants.Create(ctx, &admin.ID, form.Name)
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid {
		form.Errors = e.Fields
		return h.renderAdminAssistants(c, http.StatusUnprocessableEntity, views.AdminAssistantsView{Form: form})
	}
	if err != nil {
		return err
	}
	if form.EnableAll {
		if err := h.cfg.Assistants.EnableAll(ctx, a.ID); err != nil {
			return err
		}
	}
	h.Log.Info("assistant created", "by", admin.ID, "assistant_id", a.ID)
	kit.SetFlash(c, locale.Console("console.flash.assistant_added", locale.Params{"Name": a.Name}), false)
	return kit.SeeOther(c, "/admin/assistants")
}

// handleAdminAssistantKeyCreate answers POST /admin/assistants/:id/keys
// and redirects to the page that shows the key once (setKeyFlash), so a
// reload of that page issues nothing. The key is stored only as a hash.
func (h *Handler) handleAdminAssistantKeyCreate(c echo.Context) error {
	admin, _ := kit.CurrentUser(c)
	a, err := h.cfg.Assistants.Get(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	key, secret, err := h.cfg.Assistants.IssueKey(c.Request().Context(), a.ID, &admin.ID)
	if e, ok := apperr.As(err); ok && e.Kind == apperr.IllegalTransition {
		kit.SetFlash(c, e.Message, true)
		return kit.SeeOther(c, "/admin/assistants")
	}
	if err != nil {
		return err
	}
	h.Log.Info("api key issued", "by", admin.ID, "assistant_id", a.ID, "key_id", key.ID)
	setKeyFlash(c, a.Name, secret)
	return kit.SeeOther(c, "/admin/assistants")
}

// handleAdminAssistantActions answers POST /admin/assistants/:id/actions:
// the checked actions are turned on, the others off.
func (h *Handler) handleAdminAssistantActions(c echo.Context) error {
	ctx := c.Request().Context()
	a, err := h.cfg.Assistants.Get(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return apperr.Wrap(err, apperr.BadRequest, say("console.rest.form_unreadable", nil))
	}
	on := form["action"]
	for _, sys := range h.cfg.Registry.Systems() {
		for _, spec := range sys.Actions() {
			if err := h.cfg.Assistants.SetAction(ctx, a.ID, sys.Name(), spec.Name, slices.Contains(on, sys.Name()+"/"+spec.Name)); err != nil {
				return err
			}
		}
	}
	admin, _ := kit.CurrentUser(c)
	h.Log.Info("assistant actions changed", "by", admin.ID, "assistant_id", a.ID, "enabled", on)
	kit.SetFlash(c, locale.Console("console.flash.assistant_actions_saved", locale.Params{"Name": a.Name}), false)
	return kit.SeeOther(c, "/admin/assistants")
}

// handleAdminAssistantDisable answers POST /admin/assistants/:id/disable
// from its confirmation page: its keys stop working at once.
func (h *Handler) handleAdminAssistantDisable(c echo.Context) error {
	if !confirmed(c) {
		return h.handleAdminAssistantDisableConfirm(c)
	}
	if err := h.cfg.Assistants.SetDisabled(c.Request().Context(), c.Param("id"), true); err != nil {
		return err
	}
	kit.SetFlash(c, locale.Console("console.flash.assistant_disabled", nil), false)
	return kit.SeeOther(c, "/admin/assistants")
}

// handleAdminAssistantEnable answers POST /admin/assistants/:id/enable.
func (h *Handler) handleAdminAssistantEnable(c echo.Context) error {
	if err := h.cfg.Assistants.SetDisabled(c.Request().Context(), c.Param("id"), false); err != nil {
		return err
	}
	kit.SetFlash(c, locale.Console("console.flash.assistant_enabled", nil), false)
	return kit.SeeOther(c, "/admin/assistants")
}

// handleAdminKeyRevoke answers POST /admin/keys/:id/revoke from its
// confirmation page.
func (h *Handler) handleAdminKeyRevoke(c echo.Context) error {
	if !confirmed(c) {
		return h.handleAdminKeyRevokeConfirm(c)
	}
	k, err := h.cfg.Assistants.RevokeKey(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	admin, _ := kit.CurrentUser(c)
	h.Log.Info("api key revoked", "by", admin.ID, "key_id", k.ID)
	kit.SetFlash(c, locale.Console("console.flash.key_revoked", locale.Params{"Prefix": k.Prefix}), false)
	return kit.SeeOther(c, "/admin/assistants")
}

// renderAdminAssistants renders the page; v brings the forms and notices,
// the assistants are filled in here.
func (h *Handler) renderAdminAssistants(c echo.Context, status int, v views.AdminAssistantsView) error {
	list, err := h.cfg.Assistants.List(c.Request().Context())
	if err != nil {
		return err
	}
	rows := make([]views.AssistantRow, len(list))
	for i, a := range list {
		row := views.AssistantRow{ID: a.ID, Name: a.Name, Disabled: a.Disabled, Created: a.CreatedAt.Format("2 Jan 2006"),
			Grants: grantsForm(a.ID, a.Grants)}
		for _, k := range a.Keys {
			kr := views.KeyRow{ID: k.ID, Prefix: k.Prefix, Created: k.CreatedAt.Format("2 Jan 2006 15:04"), LastUsed: say("console.rest.keys.never_used", nil)}
			if k.LastUsedAt != nil {
				kr.LastUsed = k.LastUsedAt.Format("2 Jan 2006 15:04")
			}
			if k.RevokedAt != nil {
				kr.Revoked = k.RevokedAt.Format(time.DateOnly)
			}
			row.Keys = append(row.Keys, kr)
		}
		for _, sys := range h.cfg.Registry.Systems() {
			for _, spec := range sys.Actions() {
				v := sys.Name() + "/" + spec.Name
				row.Actions = append(row.Actions, views.ActionToggle{Value: v, Label: say("console.labels.action_named", locale.Params{"Title": spec.Title, "Name": v}), Enabled: a.Enabled[v]})
			}
		}
		rows[i] = row
	}
	if err := h.webhookRows(c, rows); err != nil {
		return err
	}
	p := h.Page(c, title("assistants", nil))
	v.Assistants = rows
	return kit.Render(c, status, views.AdminAssistants(p, v))
}
