package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/authserver"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// handleAdminClients answers GET /admin/clients: the programs people
// connected with OAuth, their connections, and the approval setting.
func (h *Handler) handleAdminClients(c echo.Context) error {
	ctx := c.Request().Context()
	need, err := h.cfg.AuthServer.ClientsNeedApproval(ctx)
	if err != nil {
		return err
	}
	clients, err := h.cfg.AuthServer.Clients(ctx)
	if err != nil {
		return err
	}
	grants, err := h.cfg.AuthServer.Grants(ctx)
	if err != nil {
		return err
	}
	iss := authserver.Issuer(h.cfg.PublicBase, c.Request())
	v := views.AdminClientsView{NeedApproval: need, MCPURL: authserver.Resource(iss)}
	for _, cl := range clients {
		row := views.AdminClientRow{ID: cl.ID, Name: cl.Name, Created: cl.CreatedAt.UTC().Format("2006-01-02 15:04"),
			KnownBy: say("console.labels.clients.known_by.registered", nil), CanRevoke: !cl.Revoked, CanApprove: !cl.Revoked && !cl.Approved}
		if cl.Document {
			row.KnownBy = say("console.labels.clients.known_by.document", locale.Params{"Host": redirectHost(cl.ID)})
		}
		hosts := make([]string, 0, len(cl.RedirectURIs))
		for _, r := range cl.RedirectURIs {
			hosts = append(hosts, redirectHost(r))
		}
		row.Returns = strings.Join(hosts, ", ")
		switch {
		case cl.Revoked:
			row.Status = say("console.labels.clients.status.revoked", nil)
		case cl.Approved:
			row.Status = say("console.labels.clients.status.approved", nil)
		case need:
			row.Status = say("console.labels.clients.status.awaiting", nil)
		default:
			row.Status = say("console.labels.clients.status.usable", nil)
		}
		v.Clients = append(v.Clients, row)
	}
	now := h.Now()
	for _, g := range grants {
		row := views.AdminGrantRow{ID: g.ID, Client: g.ClientName, Person: g.UserName, ActsAs: say("console.labels.clients.acts_as.assistant", locale.Params{"Name": g.AssistantName}),
			Created: g.CreatedAt.UTC().Format("2006-01-02 15:04"), LastUsed: say("console.labels.clients.never", nil), Status: say("console.labels.clients.grant.live", nil), CanRevoke: true}
		if g.ActsAsUser {
			row.ActsAs = say("console.labels.clients.acts_as.self", locale.Params{"Name": g.UserName})
		}
		if g.LastUsedAt != nil {
			row.LastUsed = g.LastUsedAt.UTC().Format("2006-01-02 15:04")
		}
		switch {
		case g.RevokedAt != nil:
			row.Status, row.CanRevoke = say("console.labels.clients.status.revoked", nil), false
		case !now.Before(g.ExpiresAt):
			row.Status, row.CanRevoke = say("console.labels.clients.grant.expired", nil), false
		}
		v.Grants = append(v.Grants, row)
	}
	return kit.Render(c, http.StatusOK, views.AdminClients(h.Page(c, title("clients", nil)), v))
}

// handleAdminClientsSetting answers POST /admin/clients/settings: whether
// unknown clients need an admin's approval before first use.
func (h *Handler) handleAdminClientsSetting(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	need := c.FormValue("need_approval") == "on"
	if err := h.cfg.AuthServer.SetClientsNeedApproval(c.Request().Context(), actorOf(c, u), need); err != nil {
		return err
	}
	msg := locale.Console("console.flash.clients_open", nil)
	if need {
		msg = locale.Console("console.flash.clients_need_approval", nil)
	}
	kit.SetFlash(c, msg, false)
	return kit.SeeOther(c, "/admin/clients")
}

// handleAdminClientApprove answers POST /admin/clients/approve
// (client_id): the client may be connected from now on.
func (h *Handler) handleAdminClientApprove(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	id := c.FormValue("client_id")
	if err := h.cfg.AuthServer.ApproveClient(c.Request().Context(), actorOf(c, u), id); err != nil {
		return err
	}
	kit.SetFlash(c, locale.Console("console.flash.client_approved", nil), false)
	return kit.SeeOther(c, "/admin/clients")
}

// handleAdminClientRevoke answers POST /admin/clients/revoke (client_id):
// without confirm=yes, the page that says what ends; with it, the
// client and every connection it holds are revoked.
func (h *Handler) handleAdminClientRevoke(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	ctx := c.Request().Context()
	id := c.FormValue("client_id")
	cl, err := h.cfg.AuthServer.KeptClient(ctx, id)
	if err != nil {
		return err
	}
	if !confirmed(c) {
		named := locale.Params{"Name": cl.Name}
		return h.renderConfirm(c, title("revoke_client", nil), views.AdminConfirmView{Heading: say("console.rest.confirm.client.heading", named),
			Ends: []string{say("console.rest.confirm.client.connections_end", named),
				say("console.rest.confirm.client.never_again", named),
				say("console.rest.confirm.nothing_undone", nil)},
			Action: "/admin/clients/revoke?client_id=" + url.QueryEscape(id), Button: say("console.rest.confirm.client.button", named), Back: "/admin/clients"})
	}
	if err := h.cfg.AuthServer.RevokeClient(ctx, actorOf(c, u), id); err != nil {
		return err
	}
	kit.SetFlash(c, locale.Console("console.flash.client_revoked", locale.Params{"Name": cl.Name}), false)
	return kit.SeeOther(c, "/admin/clients")
}

// handleAdminGrantRevoke answers POST /admin/grants/:id/revoke: without
// confirm=yes, the page that says what ends; with it, every token of the
// connection is revoked.
func (h *Handler) handleAdminGrantRevoke(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	id := c.Param("id")
	if !confirmed(c) {
		return h.renderConfirm(c, title("revoke_connection", nil), views.AdminConfirmView{Heading: say("console.rest.confirm.connection.heading", nil),
			Ends: []string{say("console.rest.confirm.connection.tokens_stop", nil),
				say("console.rest.confirm.nothing_undone", nil)},
			Action: "/admin/grants/" + url.PathEscape(id) + "/revoke", Button: say("console.rest.confirm.connection.button", nil), Back: "/admin/clients"})
	}
	if err := h.cfg.AuthServer.RevokeGrant(c.Request().Context(), actorOf(c, u), id); err != nil {
		return err
	}
	kit.SetFlash(c, locale.Console("console.flash.connection_revoked", nil), false)
	return kit.SeeOther(c, "/admin/clients")
}
