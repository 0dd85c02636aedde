package console

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/webhooks"
	"countersign/views"
	"countersign/web/kit"
)

// deliveriesShown is how many of an assistant's latest deliveries its card
// shows.
const deliveriesShown = 20

// webhooks is the outcome-webhook service the wiring gave; without one the
// calls are refused as not found.
func (h *Handler) webhooks() (*webhooks.Service, error) {
	if h.cfg.Webhooks == nil {
		return nil, refusal(apperr.NotFound, "webhooks_off", nil)
	}
	return h.cfg.Webhooks, nil
}

// handleAdminWebhookRegister answers POST /admin/assistants/:id/webhook:
// the assistant's outcome endpoint is set (replacing an earlier one) and
// its signing secret is shown on this response's page only, like an API
// key's.
func (h *Handler) handleAdminWebhookRegister(c echo.Context) error {
	ctx := c.Request().Context()
	admin, _ := kit.CurrentUser(c)
	a, err := h.cfg.Assistants.Get(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	svc, err := h.webhooks()
	if err != nil {
		return err
	}
	form := views.WebhookForm{AssistantID: a.ID, URL: c.FormValue("url")}
	ep, secret, err := svc.Register(ctx, a.ID, &admin.ID, form.URL)
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid {
		form.Errors = e.Fields
		return h.renderAdminAssistants(c, http.StatusUnprocessableEntity, views.AdminAssistantsView{
			Form: views.NewAssistantForm{EnableAll: true}, WebhookForm: form})
	}
	if err != nil {
		return err
	}
	h.Log.Info("webhook registered", "by", admin.ID, "assistant_id", a.ID, "webhook_id", ep.ID)
	c.Response().Header().Set("Cache-Control", "no-store")
	return h.renderAdminAssistants(c, http.StatusOK, views.AdminAssistantsView{Form: views.NewAssistantForm{EnableAll: true},
		NewWebhook: &views.NewWebhookNotice{AssistantName: a.Name, URL: ep.URL, Secret: secret}})
}

// handleAdminWebhookRemove answers POST /admin/assistants/:id/webhook/remove:
// nothing more is sent to the endpoint; pending deliveries are given up.
func (h *Handler) handleAdminWebhookRemove(c echo.Context) error {
	svc, err := h.webhooks()
	if err != nil {
		return err
	}
	if err := svc.Remove(c.Request().Context(), c.Param("id")); err != nil {
		return err
	}
	admin, _ := kit.CurrentUser(c)
	h.Log.Info("webhook removed", "by", admin.ID, "assistant_id", c.Param("id"))
	kit.SetFlash(c, locale.Console("console.flash.webhook_removed", nil), false)
	return kit.SeeOther(c, "/admin/assistants")
}

// handleAdminWebhookResend answers POST
// /admin/assistants/:id/deliveries/:delivery/resend: the delivery is sent
// again at once (same delivery id, fresh signature) and retried for a day.
func (h *Handler) handleAdminWebhookResend(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("delivery"), 10, 64)
	if err != nil {
		return refusal(apperr.NotFound, "no_delivery", nil)
	}
	svc, err := h.webhooks()
	if err != nil {
		return err
	}
	err = svc.Resend(c.Request().Context(), c.Param("id"), id)
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Conflict {
		kit.SetFlash(c, e.Message, true)
		return kit.SeeOther(c, "/admin/assistants")
	}
	if err != nil {
		return err
	}
	admin, _ := kit.CurrentUser(c)
	h.Log.Info("webhook delivery resent", "by", admin.ID, "assistant_id", c.Param("id"), "delivery", id)
	kit.SetFlash(c, locale.Console("console.flash.delivery_again", locale.Params{"Delivery": c.Param("delivery")}), false)
	return kit.SeeOther(c, "/admin/assistants")
}

// handleAdminWebhookTest answers POST /admin/assistants/:id/webhook/test:
// a signed test delivery (event webhook.test) is queued to the
// assistant's endpoint and sent by the normal worker, so it shows in the
// deliveries list with its attempts like any other.
func (h *Handler) handleAdminWebhookTest(c echo.Context) error {
	svc, err := h.webhooks()
	if err != nil {
		return err
	}
	admin, _ := kit.CurrentUser(c)
	id, err := svc.SendTest(c.Request().Context(), c.Param("id"), actorOf(c, admin))
	if e, ok := apperr.As(err); ok && e.Kind == apperr.NotFound {
		kit.SetFlash(c, e.Message, true)
		return kit.SeeOther(c, "/admin/assistants")
	}
	if err != nil {
		return err
	}
	h.Log.Info("webhook test queued", "by", admin.ID, "assistant_id", c.Param("id"), "delivery", id)
	kit.SetFlash(c, locale.Console("console.flash.test_event_queued", locale.Params{"Delivery": strconv.FormatInt(id, 10)}), false)
	return kit.SeeOther(c, "/admin/assistants")
}

// webhookRows fills each assistant's endpoint and latest deliveries.
func (h *Handler) webhookRows(c echo.Context, rows []views.AssistantRow) error {
	ctx := c.Request().Context()
	svc := h.cfg.Webhooks
	if svc == nil {
		return nil
	}
	endpoints, err := svc.Endpoints(ctx)
	if err != nil {
		return err
	}
	for i := range rows {
		if ep, ok := endpoints[rows[i].ID]; ok {
			rows[i].Webhook = &views.WebhookRow{URL: ep.URL, Created: ep.CreatedAt.Format("2 Jan 2006 15:04")}
		}
		list, err := svc.Deliveries(ctx, rows[i].ID, deliveriesShown)
		if err != nil {
			return err
		}
		for _, d := range list {
			dr := views.DeliveryRow{ID: strconv.FormatInt(d.ID, 10), Event: d.Event, InvocationID: d.InvocationID,
				State: string(d.State), Created: d.CreatedAt.Format("2 Jan 15:04:05")}
			if d.Event == string(controlplane.EventWebhookTest) {
				dr.InvocationID = ""
			}
			// Removing or replacing an endpoint gives up its pending
			// deliveries, and one to a removed endpoint is never claimed
			// or resent: it has no next try.
			dr.Removed = d.State != webhooks.Delivered && d.EndpointRemoved
			if d.State == webhooks.Pending && !dr.Removed {
				dr.Next = d.NextAttemptAt.Format("2 Jan 15:04:05")
			}
			if n := len(d.Attempts); n > 0 && d.State != webhooks.Delivered && d.Attempts[n-1].Status/100 != 2 {
				dr.Failing = failingWords(d.Attempts[n-1], d)
			} else if dr.Removed {
				dr.Failing = say("console.rest.webhooks.removed", locale.Params{"URL": d.URL})
			}
			for _, a := range d.Attempts {
				ar := views.AttemptRow{At: a.At.Format(time.DateTime), Error: a.Error}
				if a.Status != 0 {
					ar.Status = strconv.Itoa(a.Status)
				}
				// Only a 2xx answer's body is shown, also for attempts
				// recorded before the worker stopped keeping the others:
				// an error page of an internal service is not for the
				// console to relay.
				if a.Status/100 == 2 {
					ar.Body = a.Body
				}
				dr.Attempts = append(dr.Attempts, ar)
			}
			rows[i].Deliveries = append(rows[i].Deliveries, dr)
		}
	}
	return nil
}

// failingWords says why a delivery is not getting through, from its last
// attempt at the delivery's own endpoint: "HTTP 500 Internal Server Error
// from https://… at 10:04:00, next try 10:04:30."
func failingWords(last webhooks.Attempt, d webhooks.Delivery) string {
	what := say("console.rest.webhooks.no_answer", locale.Params{"Error": last.Error})
	if last.Status != 0 {
		// The status's own words are HTTP's, not the console's.
		what = say("console.rest.webhooks.http", locale.Params{"Status": strconv.Itoa(last.Status), "Text": http.StatusText(last.Status)})
	}
	// The delivery's own endpoint, which may not be the current one.
	if d.URL != "" {
		what = say("console.rest.webhooks.from", locale.Params{"What": what, "URL": d.URL})
	}
	// Seconds: the first retries come 30 s and a minute apart.
	what = say("console.rest.webhooks.at", locale.Params{"What": what, "At": last.At.Format("15:04:05")})
	if d.EndpointRemoved {
		return say("console.rest.webhooks.endpoint_removed", locale.Params{"What": what})
	}
	if d.State == webhooks.Pending {
		return say("console.rest.webhooks.next_try", locale.Params{"What": what, "Next": d.NextAttemptAt.Format("15:04:05")})
	}
	return say("console.rest.webhooks.no_more_tries", locale.Params{"What": what})
}
