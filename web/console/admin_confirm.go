package console

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
	"countersign/web/layout"
)

// confirmed reports whether a POST that ends something comes from its
// confirmation page; any other post of it (an old form, a bookmarked
// button) gets that page instead of the change.
func confirmed(c echo.Context) bool { return c.FormValue("confirm") == "yes" }

// handleAdminKeyRevokeConfirm answers GET /admin/keys/:id/revoke (and a
// POST without confirm=yes): what revoking the key ends, with the button
// that does it.
func (h *Handler) handleAdminKeyRevokeConfirm(c echo.Context) error {
	ctx := c.Request().Context()
	a, k, err := h.liveKey(c)
	if err != nil {
		return err
	}
	open, err := h.cfg.Assistants.OpenTasks(ctx, a.ID)
	if err != nil {
		return err
	}
	others := 0
	for _, o := range a.Keys {
		if o.ID != k.ID && o.RevokedAt == nil {
			others++
		}
	}
	name := k.Prefix + "…"
	named := locale.Params{"Key": name, "Name": a.Name}
	ends := []string{say("console.rest.confirm.key.stops", named)}
	if others == 0 {
		ends = append(ends, say("console.rest.confirm.key.only_key", named))
		ends = append(ends, openTasksSentence("console.rest.confirm.key.open_tasks_wait", a.Name, open))
	} else {
		ends = append(ends, sayN("console.rest.confirm.key.others_keep", int64(others), named))
		ends = append(ends, openTasksSentence("console.rest.confirm.key.open_tasks_go_on", a.Name, open))
	}
	ends = append(ends, say("console.rest.confirm.nothing_undone", nil))
	return h.renderConfirm(c, title("revoke_key", nil), views.AdminConfirmView{Heading: say("console.rest.confirm.key.heading", named), Ends: ends,
		Action: "/admin/keys/" + k.ID + "/revoke", Button: say("console.rest.confirm.key.button", named), Back: "/admin/assistants"})
}

// handleAdminAssistantDisableConfirm answers GET
// /admin/assistants/:id/disable (and a POST without confirm=yes).
func (h *Handler) handleAdminAssistantDisableConfirm(c echo.Context) error {
	ctx := c.Request().Context()
	// Get leaves the keys out; the list has them.
	list, err := h.cfg.Assistants.List(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(list, func(a assistants.Assistant) bool { return a.ID == c.Param("id") })
	if i < 0 {
		return refusal(apperr.NotFound, "no_assistant", nil)
	}
	a := list[i]
	// Said on this page, not in a flash: a GET never writes the session.
	if a.Disabled {
		return h.renderConfirmStatus(c, http.StatusConflict, title("disable_assistant", nil), views.AdminConfirmView{
			Heading: say("console.rest.confirm.assistant.heading", locale.Params{"Name": a.Name}),
			Refused: say("console.rest.confirm.assistant.disabled_already", locale.Params{"Name": a.Name}), Back: "/admin/assistants"})
	}
	open, err := h.cfg.Assistants.OpenTasks(ctx, a.ID)
	if err != nil {
		return err
	}
	live := int64(0)
	for _, k := range a.Keys {
		if k.RevokedAt == nil {
			live++
		}
	}
	named := locale.Params{"Name": a.Name}
	disabled := say("console.rest.confirm.assistant.disabled_no_key", named)
	if live > 0 {
		disabled = sayN("console.rest.confirm.assistant.disabled_keys_stop", live, named)
	}
	ends := []string{disabled,
		openTasksSentence("console.rest.confirm.assistant.open_tasks_stay", a.Name, open),
		say("console.rest.confirm.assistant.nothing_undone", nil),
		say("console.rest.confirm.assistant.enable_again", nil)}
	return h.renderConfirm(c, title("disable_assistant", nil), views.AdminConfirmView{Heading: say("console.rest.confirm.assistant.heading", named), Ends: ends,
		Action: "/admin/assistants/" + a.ID + "/disable", Button: say("console.rest.confirm.assistant.button", named), Back: "/admin/assistants"})
}

// handleAdminUserDisableConfirm answers GET /admin/users/:id/disable (and
// a POST without confirm=yes).
func (h *Handler) handleAdminUserDisableConfirm(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return refusal(apperr.NotFound, "no_user", nil)
	}
	u, err := h.Accounts.User(c.Request().Context(), id)
	if err != nil {
		return err
	}
	named := locale.Params{"Name": u.Name, "Email": u.Email, "Role": layout.RoleLabel(u.Role)}
	if me, _ := kit.CurrentUser(c); me.ID == u.ID {
		return h.renderConfirmStatus(c, http.StatusForbidden, title("disable_user", nil), views.AdminConfirmView{Heading: say("console.rest.confirm.user.heading", named),
			Refused: say("console.rest.confirm.user.not_yourself", nil), Back: "/admin/users"})
	}
	ends := []string{say("console.rest.confirm.user.signed_out", named),
		say("console.rest.confirm.user.decisions_stand", named),
		say("console.rest.confirm.user.enable_again", named)}
	return h.renderConfirm(c, title("disable_user", nil), views.AdminConfirmView{Heading: say("console.rest.confirm.user.heading", named), Ends: ends,
		Action: "/admin/users/" + strconv.FormatInt(u.ID, 10) + "/disable", Button: say("console.rest.confirm.user.button", named), Back: "/admin/users"})
}

func (h *Handler) renderConfirm(c echo.Context, title string, v views.AdminConfirmView) error {
	return h.renderConfirmStatus(c, http.StatusOK, title, v)
}

func (h *Handler) renderConfirmStatus(c echo.Context, status int, title string, v views.AdminConfirmView) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	return kit.Render(c, status, views.AdminConfirm(h.Page(c, title), v))
}

// liveKey finds the key of the route's :id among the assistants' keys,
// with its assistant; NotFound when no live key has that id.
func (h *Handler) liveKey(c echo.Context) (assistants.Assistant, assistants.Key, error) {
	list, err := h.cfg.Assistants.List(c.Request().Context())
	if err != nil {
		return assistants.Assistant{}, assistants.Key{}, err
	}
	for _, a := range list {
		for _, k := range a.Keys {
			if k.ID == c.Param("id") && k.RevokedAt == nil {
				return a, k, nil
			}
		}
	}
	return assistants.Assistant{}, assistants.Key{}, refusal(apperr.NotFound, "no_live_key", nil)
}

// openTasksSentence says how many open tasks an assistant has and what
// becomes of them: the plural message id for a count of one or more (its
// verb agrees with the count), one sentence for none.
func openTasksSentence(id, name string, open int64) string {
	if open == 0 {
		return say("console.rest.confirm.no_open_task", locale.Params{"Name": name})
	}
	return sayN(id, open, locale.Params{"Name": name})
}
