package console

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/assistants"
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
	ends := []string{"Key " + name + " of assistant " + a.Name + " stops working immediately: every call made with it is refused from then on, and a revoked key never works again."}
	if others == 0 {
		ends = append(ends, "It is "+a.Name+"'s only live key: "+a.Name+" cannot call the API or the MCP server until you issue it a new one.")
		ends = append(ends, openTasksSentence(a.Name, open, "waits", "wait", "without a caller until it has a new key"))
	} else {
		ends = append(ends, a.Name+" keeps "+views.Plural(int64(others), "other live key", "other live keys")+", which keep working.")
		ends = append(ends, openTasksSentence(a.Name, open, "goes", "go", "on through its other keys"))
	}
	ends = append(ends, "Nothing already proposed or sent is withdrawn or undone.")
	return h.renderConfirm(c, title("revoke_key", nil), views.AdminConfirmView{Heading: "Revoke key " + name + " of " + a.Name + "?", Ends: ends,
		Action: "/admin/keys/" + k.ID + "/revoke", Button: "Revoke key " + name, Back: "/admin/assistants"})
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
		return apperr.New(apperr.NotFound, "No such assistant.")
	}
	a := list[i]
	// Said on this page, not in a flash: a GET never writes the session.
	if a.Disabled {
		return h.renderConfirmStatus(c, http.StatusConflict, title("disable_assistant", nil), views.AdminConfirmView{Heading: "Disable assistant " + a.Name + "?",
			Refused: a.Name + " is disabled already.", Back: "/admin/assistants"})
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
	keys := "it has no live key"
	if live > 0 {
		keys = "its " + views.Plural(live, "live key stops", "live keys stop") + " working immediately"
	}
	ends := []string{"Assistant " + a.Name + " is disabled: " + keys + ", and it cannot call the API or the MCP server.",
		openTasksSentence(a.Name, open, "stays", "stay", "open without a caller until you enable it again"),
		"Nothing already proposed or sent is withdrawn or undone; requests waiting for a person stay in the queue.",
		"You can enable it again: its live keys then work again."}
	return h.renderConfirm(c, title("disable_assistant", nil), views.AdminConfirmView{Heading: "Disable assistant " + a.Name + "?", Ends: ends,
		Action: "/admin/assistants/" + a.ID + "/disable", Button: "Disable " + a.Name, Back: "/admin/assistants"})
}

// handleAdminUserDisableConfirm answers GET /admin/users/:id/disable (and
// a POST without confirm=yes).
func (h *Handler) handleAdminUserDisableConfirm(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return apperr.New(apperr.NotFound, "No such user.")
	}
	u, err := h.Accounts.User(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if me, _ := kit.CurrentUser(c); me.ID == u.ID {
		return h.renderConfirmStatus(c, http.StatusForbidden, title("disable_user", nil), views.AdminConfirmView{Heading: "Disable " + u.Name + "?",
			Refused: "You cannot disable your own account; ask another admin.", Back: "/admin/users"})
	}
	ends := []string{u.Name + " (" + u.Email + ", " + layout.RoleLabel(u.Role) + ") can no longer sign in and is signed out everywhere immediately.",
		"Decisions " + u.Name + " already made stand; nothing is undone.",
		"You can enable the account again; " + u.Name + " then signs in with the same password."}
	return h.renderConfirm(c, title("disable_user", nil), views.AdminConfirmView{Heading: "Disable " + u.Name + "?", Ends: ends,
		Action: "/admin/users/" + strconv.FormatInt(u.ID, 10) + "/disable", Button: "Disable " + u.Name, Back: "/admin/users"})
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
	return assistants.Assistant{}, assistants.Key{}, apperr.New(apperr.NotFound, "No such live key.")
}

// openTasksSentence says how many open tasks an assistant has and what
// becomes of them: the verb agrees (verbOne, verbMany), the rest follows.
func openTasksSentence(name string, open int64, verbOne, verbMany, rest string) string {
	if open == 0 {
		return name + " has no open task."
	}
	return name + " has " + views.Plural(open, "open task", "open tasks") + " (active or paused): " +
		views.Noun(open, "it "+verbOne, "they "+verbMany) + " " + rest + "."
}
