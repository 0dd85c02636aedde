package console

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/views"
	"countersign/web/kit"
)

// handleAdminUsers answers GET /admin/users.
func (s *Handler) handleAdminUsers(c echo.Context) error {
	return s.renderAdminUsers(c, http.StatusOK, views.NewUserForm{Role: string(accounts.Agent)})
}

// handleAdminUserCreate answers POST /admin/users.
func (s *Handler) handleAdminUserCreate(c echo.Context) error {
	form := views.NewUserForm{Email: c.FormValue("email"), Name: c.FormValue("name"), Role: c.FormValue("role")}
	u, err := s.Accounts.Create(c.Request().Context(), accounts.NewUser{
		Email: form.Email, Name: form.Name, Role: accounts.Role(form.Role), Password: c.FormValue("password")})
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid {
		form.Errors = e.Fields
		return s.renderAdminUsers(c, http.StatusUnprocessableEntity, form)
	}
	if err != nil {
		return err
	}
	admin, _ := kit.CurrentUser(c)
	s.Log.Info("user created", "by", admin.ID, "user_id", u.ID, "role", u.Role)
	kit.SetFlash(c, "Added "+u.Name+" ("+u.Role.Label()+").", false)
	return kit.SeeOther(c, "/admin/users")
}

// handleAdminUserRole answers POST /admin/users/:id/role.
func (s *Handler) handleAdminUserRole(c echo.Context) error {
	return s.adminUserChange(c, func(admin accounts.User, id int64) (string, error) {
		role := accounts.Role(c.FormValue("role"))
		return "Role changed to " + role.Label() + ".", s.Accounts.SetRole(c.Request().Context(), admin, id, role)
	})
}

// handleAdminUserDisable answers POST /admin/users/:id/disable: the user's
// sessions end at once.
func (s *Handler) handleAdminUserDisable(c echo.Context) error {
	return s.adminUserChange(c, func(admin accounts.User, id int64) (string, error) {
		return "User disabled and signed out everywhere.", s.Accounts.SetDisabled(c.Request().Context(), admin, id, true)
	})
}

// handleAdminUserEnable answers POST /admin/users/:id/enable.
func (s *Handler) handleAdminUserEnable(c echo.Context) error {
	return s.adminUserChange(c, func(admin accounts.User, id int64) (string, error) {
		return "User enabled.", s.Accounts.SetDisabled(c.Request().Context(), admin, id, false)
	})
}

func (s *Handler) adminUserChange(c echo.Context, change func(admin accounts.User, id int64) (string, error)) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return apperr.New(apperr.NotFound, "No such user.")
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
	s.Log.Info("user changed", "by", admin.ID, "user_id", id, "change", c.Path())
	kit.SetFlash(c, msg, false)
	return kit.SeeOther(c, "/admin/users")
}

func (s *Handler) renderAdminUsers(c echo.Context, status int, form views.NewUserForm) error {
	users, err := s.Accounts.Users(c.Request().Context())
	if err != nil {
		return err
	}
	me, _ := kit.CurrentUser(c)
	rows := make([]views.UserRow, len(users))
	for i, u := range users {
		rows[i] = views.UserRow{ID: u.ID, Name: u.Name, Email: u.Email, Role: string(u.Role), RoleLabel: u.Role.Label(),
			Disabled: u.Disabled(), Created: u.CreatedAt.Format("2 Jan 2006"), Self: u.ID == me.ID}
	}
	roles := make([]views.Option, len(accounts.Roles))
	for i, r := range accounts.Roles {
		roles[i] = views.Option{Value: string(r), Label: r.Label()}
	}
	p := s.Page(c, "Users")
	return kit.Render(c, status, views.AdminUsers(p, views.AdminUsersView{Users: rows, Form: form, Roles: roles}))
}
