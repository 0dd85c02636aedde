package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/views"
)

// intro says in one sentence what each role does in the console.
var intro = map[accounts.Role]string{
	accounts.Customer: "Here you confirm or decline what an assistant proposed for you, and see what happened to it.",
	accounts.Agent:    "Here you approve what assistants propose, look after tasks, and check results nobody could confirm.",
	accounts.Manager:  "Here you read how actions turn out and set each action's stage, limits, owner and review date.",
	accounts.Admin:    "Here you manage who can sign in and what they may do.",
}

// handleHome answers GET /: each role's landing page.
func (s *Server) handleHome(c echo.Context) error {
	u, _ := currentUser(c)
	p, err := s.page(c, "Home")
	if err != nil {
		return err
	}
	var links []views.NavItem
	for _, item := range p.Nav {
		if item.Href != "/" {
			links = append(links, item)
		}
	}
	hv := views.HomeView{Name: u.Name, RoleLabel: u.Role.Label(), Intro: intro[u.Role], Links: links}
	if u.Role == accounts.Manager || u.Role == accounts.Admin {
		if hv.OverdueReviews, err = s.overdueReviews(c.Request().Context()); err != nil {
			return err
		}
	}
	return render(c, http.StatusOK, views.Home(p, hv))
}

func itoa(n int) string { return strconv.Itoa(n) }
