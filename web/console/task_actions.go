package console

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
	"countersign/web/layout"
)

// taskControl runs pause, resume or cancel on the version the page showed.
func (h *Handler) taskControl(c echo.Context, verb controlplane.TaskVerb, done string) error {
	u, _ := kit.CurrentUser(c)
	id := c.Param("id")
	if _, err := h.cfg.Control.ChangeTask(c.Request().Context(), actorOf(c, u), id, verb, expectedVersion(c)); err != nil {
		return err
	}
	kit.SetFlash(c, done, false)
	return kit.SeeOther(c, "/tasks/"+url.PathEscape(id))
}

// handleTaskPause answers POST /tasks/:id/pause: no permit after it commits.
func (h *Handler) handleTaskPause(c echo.Context) error {
	return h.taskControl(c, controlplane.TaskPause, say("console.rest.task.paused", nil))
}

// handleTaskResume answers POST /tasks/:id/resume: budget and unresolved
// requests kept, nothing replayed.
func (h *Handler) handleTaskResume(c echo.Context) error {
	return h.taskControl(c, controlplane.TaskResume, say("console.rest.task.resumed", nil))
}

// handleTaskCancel answers POST /tasks/:id/cancel: ends the task, undoes
// nothing.
func (h *Handler) handleTaskCancel(c echo.Context) error {
	return h.taskControl(c, controlplane.TaskCancel, say("console.rest.task.cancelled", nil))
}

// handleInvocationReconcile answers POST /invocations/:id/reconcile: the
// original call is looked up by its key and the object read back; nothing
// is sent.
func (h *Handler) handleInvocationReconcile(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	rec, err := h.cfg.Control.Reconcile(c.Request().Context(), actorOf(c, u), c.Param("id"))
	if err != nil {
		return err
	}
	inv := rec.Invocation
	if rec.Conclusive {
		kit.SetFlash(c, locale.Console("console.flash.reconciled", locale.Params{"State": layout.StateLabel(inv.State)}), false)
	} else {
		kit.SetFlash(c, locale.Console("console.flash.reconcile_unsettled", nil), true)
	}
	return kit.SeeOther(c, "/tasks/"+url.PathEscape(inv.TaskID)+"?inspect="+url.QueryEscape(inv.ID)+"#inspect")
}

// handleInvocationReverse answers POST /invocations/:id/reverse: the
// compensation of a completed request is proposed, to be approved by
// someone other than the original approver.
func (h *Handler) handleInvocationReverse(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	inv, err := h.cfg.Control.Reverse(c.Request().Context(), actorOf(c, u), c.Param("id"))
	if err != nil {
		return err
	}
	kit.SetFlash(c, locale.Console("console.flash.reversal_proposed", nil), false)
	return kit.SeeOther(c, "/tasks/"+url.PathEscape(inv.TaskID))
}

// handleTaskBlockLift answers POST /tasks/:id/blocks/lift (agents and
// admins): the target named by system and target_id may be proposed on
// again in this task. The reason is required and kept in the audit event;
// without one the page comes back with 422.
func (h *Handler) handleTaskBlockLift(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	id := c.Param("id")
	form := views.LiftBlockForm{System: c.FormValue("system"), TargetID: c.FormValue("target_id"), Reason: c.FormValue("reason")}
	err := h.cfg.Control.LiftBlock(c.Request().Context(), actorOf(c, u), id, form.System, form.TargetID, form.Reason)
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid {
		form.Errors = e.Fields
		return h.renderTask(c, http.StatusUnprocessableEntity, form)
	}
	if err != nil {
		return err
	}
	kit.SetFlash(c, locale.Console("console.flash.block_lifted", locale.Params{"Target": form.System + "/" + form.TargetID}), false)
	return kit.SeeOther(c, "/tasks/"+url.PathEscape(id))
}
