package console

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/lists"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
	"countersign/web/layout"
)

// handleHome answers GET /: each role's landing page.
func (h *Handler) handleHome(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	p := h.Page(c, title("home", nil))
	var links []views.NavItem
	for _, item := range p.Nav {
		if item.Href != "/" {
			links = append(links, item)
		}
	}
	if u.Role == accounts.Customer && h.cfg.CustomerFrame != nil {
		p.Customer = h.cfg.CustomerFrame(c)
	}
	hv := views.HomeView{Name: u.Name, RoleLabel: layout.RoleLabel(u.Role), Intro: roleIntro(u.Role), Links: links}
	ctx := c.Request().Context()
	var err error
	if u.Role != accounts.Customer {
		if hv.Waiting, err = h.waitingView(ctx); err != nil {
			return err
		}
	}
	if u.Role == accounts.Manager || u.Role == accounts.Admin {
		hv.Waiting.ShowReviews = true
		if hv.OverdueReviews, err = h.overdueReviews(ctx); err != nil {
			return err
		}
	}
	return kit.Render(c, http.StatusOK, views.Home(p, hv))
}

// homeUnverifiedList is how many of the oldest unverified results the
// home page names.
const homeUnverifiedList = 10

// waitingView counts the work waiting for a person: approvals (with the
// soonest deadline), results nobody could confirm (the oldest named, each
// linked to its record on its task) and hand-offs nobody took.
func (h *Handler) waitingView(ctx context.Context) (*views.WaitingView, error) {
	w, err := h.cfg.Lists.WaitingWork(ctx, homeUnverifiedList)
	if err != nil {
		return nil, err
	}
	v := &views.WaitingView{Approvals: w.AwaitingApproval, ApprovalsCapped: w.AwaitingApproval >= lists.PendingCountCap,
		Unverified: w.Unverified, Handoffs: w.OpenHandoffs}
	if w.SoonestDeadline != nil {
		left := w.SoonestDeadline.Sub(h.Now())
		v.Soonest, v.SoonestUrgent = say("console.rest.home.soonest_in", locale.Params{"Left": timeLeft(left)}), left < 15*time.Minute
		if left <= 0 {
			v.Soonest = say("console.rest.home.soonest_passed", nil)
		}
	}
	for _, it := range w.UnverifiedItems {
		v.UnverifiedItems = append(v.UnverifiedItems, views.WaitingItem{Title: it.Title, Since: clock(it.UpdatedAt),
			Href: "/tasks/" + url.PathEscape(it.TaskID) + "?inspect=" + url.QueryEscape(it.ID)})
	}
	return v, nil
}

func itoa(n int) string { return strconv.Itoa(n) }
