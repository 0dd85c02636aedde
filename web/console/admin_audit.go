package console

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/audit"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// auditRoutes are the admin's page of the verifiable trail; none when the
// console signs no checkpoints.
func (h *Handler) auditRoutes() []kit.Route {
	if h.cfg.Audit == nil {
		return nil
	}
	admin := kit.Only(accounts.Admin)
	return []kit.Route{
		kit.GET("/admin/audit", h.handleAdminAudit, admin),
		kit.POST("/admin/audit/checkpoint", h.handleAdminAuditSign, admin),
		kit.POST("/admin/audit/export", h.handleAdminAuditExport, admin),
	}
}

// handleAdminAudit answers GET /admin/audit: the latest checkpoint, the
// verifier key, and the export form set to last month.
func (h *Handler) handleAdminAudit(c echo.Context) error {
	keys := h.cfg.Audit.Keys()
	last := h.Now().UTC().AddDate(0, -1, 0)
	from := time.Date(last.Year(), last.Month(), 1, 0, 0, 0, 0, time.UTC)
	v := views.AdminAuditView{VerifierKey: keys.VerifierKey, From: from.Format(time.DateOnly),
		To: from.AddDate(0, 1, 0).Format(time.DateOnly), VerifyCommand: verifyCommand(keys.VerifierKey)}
	cp, err := h.cfg.Audit.Latest(c.Request().Context())
	switch {
	case err == nil:
		v.Checkpoint = cp.Note
		v.Latest = say("console.audit.checkpoint.latest", locale.Params{"Size": cp.Size, "Time": cp.SignedAt.UTC().Format("2006-01-02 15:04:05")})
	case !apperr.Is(err, apperr.NotFound):
		return err
	}
	return kit.Render(c, http.StatusOK, views.AdminAudit(h.Page(c, title("audit", nil)), v))
}

// verifyCommand is what checks an export downloaded from this page.
func verifyCommand(vkey string) string {
	return say("console.audit.export.command", locale.Params{"Key": vkey})
}

// handleAdminAuditSign answers POST /admin/audit/checkpoint: sign a
// checkpoint of the trail now, and record who asked for it
// (audit.checkpoint_signed, with the size signed). The event is logged
// after the checkpoint, so the next one covers it.
func (h *Handler) handleAdminAuditSign(c echo.Context) error {
	ctx := c.Request().Context()
	cp, err := h.cfg.Audit.Sign(ctx)
	if err != nil {
		return err
	}
	if err := h.recordAudit(c, controlplane.EventAuditCheckpointSigned, map[string]any{"size": cp.Size}); err != nil {
		return err
	}
	return kit.SeeOther(c, "/admin/audit")
}

// recordAudit records the admin's action on the trail as an event of the
// trail, by the signed-in admin as they were identified.
func (h *Handler) recordAudit(c echo.Context, action controlplane.EventAction, data map[string]any) error {
	admin, _ := kit.CurrentUser(c)
	e, err := controlplane.AuditEvent(h.Now(), actorOf(c, admin), action, "", "", data)
	if err != nil {
		return err
	}
	return h.cfg.Audit.Record(c.Request().Context(), e)
}

// handleAdminAuditExport answers POST /admin/audit/export: a zip of the
// period's export (trail.jsonl, trail.csv, trail.sig).
func (h *Handler) handleAdminAuditExport(c echo.Context) error {
	f := audit.Filter{System: c.FormValue("system"), Action: c.FormValue("action"), Person: c.FormValue("person"),
		Customer: c.FormValue("customer")}
	fields := map[string]string{}
	var err error
	if f.From, err = time.Parse(time.DateOnly, c.FormValue("from")); err != nil {
		fields["from"] = say("console.audit.export.from_invalid", nil)
	}
	if f.To, err = time.Parse(time.DateOnly, c.FormValue("to")); err != nil || !f.To.After(f.From) {
		fields["to"] = say("console.audit.export.to_invalid", nil)
	}
	if len(fields) > 0 {
		return &apperr.Error{Kind: apperr.Invalid, Message: say("console.audit.export.period_invalid", nil), Fields: fields}
	}
	files, err := h.cfg.Audit.Export(c.Request().Context(), f)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for _, file := range []struct {
		name string
		data []byte
	}{{"trail.jsonl", files.JSONL}, {"trail.csv", files.CSV}, {"trail.sig", files.Sig}} {
		w, err := z.Create(file.name)
		if err == nil {
			_, err = w.Write(file.data)
		}
		if err != nil {
			return fmt.Errorf("console: audit export zip: %w", err)
		}
	}
	if err := z.Close(); err != nil {
		return errors.Join(errors.New("console: audit export zip"), err)
	}
	// The download is recorded before it is answered: an export nobody
	// can account for is not handed out (audit.exported).
	var header audit.Header
	first, _, _ := bytes.Cut(files.JSONL, []byte("\n"))
	if err := json.Unmarshal(first, &header); err != nil {
		return fmt.Errorf("console: audit export header: %w", err)
	}
	filter := map[string]any{}
	for k, v := range map[string]string{"system": f.System, "action": f.Action, "person": f.Person, "customer": f.Customer} {
		if v != "" {
			filter[k] = v
		}
	}
	checkpoint, _ := audit.ParseCheckpoint(checkpointText(header.Checkpoint))
	if err := h.recordAudit(c, controlplane.EventAuditExported, map[string]any{"from": f.From.Format(time.DateOnly),
		"to": f.To.Format(time.DateOnly), "filter": filter, "lines": header.Lines, "checkpoint_size": checkpoint.Size}); err != nil {
		return err
	}
	name := fmt.Sprintf("countersign-audit-%s-%s.zip", f.From.Format(time.DateOnly), f.To.Format(time.DateOnly))
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	return c.Blob(http.StatusOK, "application/zip", b.Bytes())
}

// checkpointText is a signed note's text, before the blank line that
// starts its signatures.
func checkpointText(note string) string {
	text, _, _ := strings.Cut(note, "\n\n")
	return text + "\n"
}
