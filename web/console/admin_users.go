package console

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/factors"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
	"countersign/web/layout"
)

// handleAdminUsers answers GET /admin/users.
func (h *Handler) handleAdminUsers(c echo.Context) error {
	return h.renderAdminUsers(c, http.StatusOK, views.NewUserForm{Role: string(accounts.Agent)})
}

// handleAdminUserCreate answers POST /admin/users.
func (h *Handler) handleAdminUserCreate(c echo.Context) error {
	form := views.NewUserForm{Email: c.FormValue("email"), Name: c.FormValue("name"), Role: c.FormValue("role")}
	u, err := h.Accounts.Create(c.Request().Context(), accounts.NewUser{
		Email: form.Email, Name: form.Name, Role: accounts.Role(form.Role), Password: c.FormValue("password")})
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid {
		form.Errors = e.Fields
		return h.renderAdminUsers(c, http.StatusUnprocessableEntity, form)
	}
	if err != nil {
		return err
	}
	admin, _ := kit.CurrentUser(c)
	h.Log.Info("user created", "by", admin.ID, "user_id", u.ID, "role", u.Role)
	kit.SetFlash(c, locale.Console("console.flash.user_added", locale.Params{"Name": u.Name, "Role": layout.RoleLabel(u.Role)}), false)
	return kit.SeeOther(c, "/admin/users")
}

// handleAdminUserRole answers POST /admin/users/:id/role.
func (h *Handler) handleAdminUserRole(c echo.Context) error {
	return h.adminUserChange(c, func(admin accounts.User, id int64) (string, error) {
		role := accounts.Role(c.FormValue("role"))
		msg := say("console.labels.role.changed", locale.Params{"Role": layout.RoleLabel(role)})
		if issuer, err := h.managedBy(c, id); err != nil {
			return "", err
		} else if issuer != "" {
			msg = say("console.labels.role.changed_managed", locale.Params{"Role": layout.RoleLabel(role)})
		}
		return msg, h.Accounts.SetRole(c.Request().Context(), admin, id, role)
	})
}

// handleAdminUserDisable answers POST /admin/users/:id/disable from its
// confirmation page: the user's sessions end at once.
func (h *Handler) handleAdminUserDisable(c echo.Context) error {
	if !confirmed(c) {
		return h.handleAdminUserDisableConfirm(c)
	}
	return h.adminUserChange(c, func(admin accounts.User, id int64) (string, error) {
		return say("console.labels.users.disabled", nil), h.Accounts.SetDisabled(c.Request().Context(), admin, id, true)
	})
}

// handleAdminUserEnable answers POST /admin/users/:id/enable.
func (h *Handler) handleAdminUserEnable(c echo.Context) error {
	return h.adminUserChange(c, func(admin accounts.User, id int64) (string, error) {
		return say("console.labels.users.enabled", nil), h.Accounts.SetDisabled(c.Request().Context(), admin, id, false)
	})
}

func (h *Handler) adminUserChange(c echo.Context, change func(admin accounts.User, id int64) (string, error)) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return refusal(apperr.NotFound, "no_user", nil)
	}
	admin, _ := kit.CurrentUser(c)
	msg, err := change(admin, id)
	if e, ok := apperr.As(err); ok && (e.Kind == apperr.Invalid || e.Kind == apperr.Forbidden) {
		text := e.Message
		for _, m := range e.Fields {
			text = m
		}
		kit.SetFlash(c, text, true)
		return kit.SeeOther(c, "/admin/users")
	}
	if err != nil {
		return err
	}
	h.Log.Info("user changed", "by", admin.ID, "user_id", id, "change", c.Path())
	kit.SetFlash(c, msg, false)
	return kit.SeeOther(c, "/admin/users")
}

func (h *Handler) renderAdminUsers(c echo.Context, status int, form views.NewUserForm) error {
	users, err := h.Accounts.Users(c.Request().Context())
	if err != nil {
		return err
	}
	me, _ := kit.CurrentUser(c)
	managed, withFactors, err := h.userMarks(c)
	if err != nil {
		return err
	}
	rows := make([]views.UserRow, len(users))
	for i, u := range users {
		rows[i] = views.UserRow{ID: u.ID, Name: u.Name, Email: u.Email, Role: string(u.Role), RoleLabel: layout.RoleLabel(u.Role),
			Disabled: u.Disabled(), Created: u.CreatedAt.Format("2 Jan 2006"), Self: u.ID == me.ID,
			SSOIssuer: managed[u.ID], Factors: withFactors[u.ID]}
	}
	roles := make([]views.Option, len(accounts.Roles))
	for i, r := range accounts.Roles {
		roles[i] = views.Option{Value: string(r), Label: layout.RoleLabel(r)}
	}
	v := views.AdminUsersView{Users: rows, Form: form, Roles: roles}
	if h.cfg.Factors != nil {
		required, err := h.cfg.Factors.RequiredRoles(c.Request().Context())
		if err != nil {
			return err
		}
		for _, r := range factors.StaffRoles {
			v.FactorRoles = append(v.FactorRoles, views.FactorRoleRow{Role: string(r), Label: layout.RoleLabel(r), Required: required[r]})
		}
	}
	p := h.Page(c, title("users", nil))
	return kit.Render(c, status, views.AdminUsers(p, v))
}

// handleAdminFactorRequirement answers POST /admin/users/factors: an admin
// makes a role require a second factor at sign-in, or no longer; the
// change is audited.
func (h *Handler) handleAdminFactorRequirement(c echo.Context) error {
	if h.cfg.Factors == nil {
		return factorsOff()
	}
	admin, _ := kit.CurrentUser(c)
	role := accounts.Role(c.FormValue("role"))
	required := c.FormValue("required") == "true"
	err := h.cfg.Factors.SetRequired(c.Request().Context(), admin, identificationOf(c, admin), role, required, kit.HashID(kit.Session(c).ID))
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid {
		kit.SetFlash(c, e.Fields["role"], true)
		return kit.SeeOther(c, "/admin/users")
	}
	if err != nil {
		return err
	}
	h.Log.Info("factor requirement changed", "by", admin.ID, "role", role, "required", required)
	msg := say("console.labels.roles.factor_not_required", locale.Params{"Roles": layout.RolesLabel(role)})
	if required {
		msg = say("console.labels.roles.factor_required", locale.Params{"Roles": layout.RolesLabel(role)})
	}
	kit.SetFlash(c, msg, false)
	return kit.SeeOther(c, "/admin/users")
}

// userMarks are, for the users page, the accounts an OpenID provider
// manages (with its issuer) and the people with a second factor to reset.
func (h *Handler) userMarks(c echo.Context) (managed map[int64]string, withFactors map[int64]bool, err error) {
	ctx := c.Request().Context()
	if h.cfg.SSO != nil {
		if managed, err = h.cfg.SSO.ManagedAccounts(ctx); err != nil {
			return nil, nil, err
		}
	}
	if h.cfg.Factors != nil {
		if withFactors, err = h.cfg.Factors.WithFactors(ctx); err != nil {
			return nil, nil, err
		}
	}
	return managed, withFactors, nil
}

// managedBy is the issuer of the OpenID provider that manages userID's
// account, or "" (a console password account, or single sign-on off).
func (h *Handler) managedBy(c echo.Context, userID int64) (string, error) {
	if h.cfg.SSO == nil {
		return "", nil
	}
	return h.cfg.SSO.ManagedBy(c.Request().Context(), userID)
}
