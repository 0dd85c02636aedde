package console_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/audit"
	"countersign/store"
	"countersign/web/webtest"
)

// TestTheAdminExportsAPeriodAndTheCommandOnThePageVerifiesIt: the admin
// signs a checkpoint from the audit page, downloads a period's export, and
// the files in the zip verify with the key the page's command names; a
// manager may not open the page.
func TestTheAdminExportsAPeriodAndTheCommandOnThePageVerifiesIt(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	ctx := context.Background()
	err := b.Store.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.InsertEvent(ctx, store.Event{At: b.Now(), ActorKind: "user", ActorID: "usr_ann", Action: "task.created"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Admin])
	page := c.Get("/admin/audit")
	doc := page.Doc(t)
	key := doc.Find(`[data-testid="audit-key"]`).Text()
	if page.StatusCode != http.StatusOK || doc.Find(`[data-testid="audit-verify"]`).Text() != "countersign audit verify -key "+key+" trail.jsonl" {
		t.Fatalf("page %d: key %q, command %q", page.StatusCode, key, doc.Find(`[data-testid="audit-verify"]`).Text())
	}
	if res := c.Post("/admin/audit/checkpoint", url.Values{"_csrf": {c.CSRF("/admin/audit")}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign: %d %s", res.StatusCode, res.Text)
	}
	if latest := c.Get("/admin/audit").Doc(t).Find(`[data-testid="audit-checkpoint"]`).Text(); !strings.Contains(latest, "\n1\n") {
		t.Errorf("the page shows no checkpoint of the one event: %q", latest)
	}
	day := time.Now().UTC()
	res := c.Post("/admin/audit/export", url.Values{"_csrf": {c.CSRF("/admin/audit")},
		"from": {day.AddDate(0, 0, -1).Format(time.DateOnly)}, "to": {day.AddDate(0, 0, 1).Format(time.DateOnly)}})
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("export: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	z, err := zip.NewReader(strings.NewReader(res.Text), int64(len(res.Text)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range z.File {
		r, _ := f.Open()
		files[f.Name], _ = io.ReadAll(r)
	}
	v := b.Audit.Keys().Verifier
	if b.Audit.Keys().VerifierKey != key {
		t.Errorf("the page's key %q is not the trail's %q", key, b.Audit.Keys().VerifierKey)
	}
	r, err := audit.Verify(audit.Files{JSONL: files["trail.jsonl"], CSV: files["trail.csv"], Sig: files["trail.sig"]}, v, nil)
	// The event and the admin's checkpoint (audit.checkpoint_signed).
	if err != nil || r.Lines != 2 || !bytes.Contains(files["trail.csv"], []byte("usr_ann")) {
		t.Errorf("the download does not verify: %v (%+v)", err, r)
	}

	bad := c.Post("/admin/audit/export", url.Values{"_csrf": {c.CSRF("/admin/audit")}, "from": {"2026-12-01"}, "to": {"2026-11-01"}})
	if bad.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(bad.Text, "The period to export is not a period.") {
		t.Errorf("a period that ends before it starts: %d", bad.StatusCode)
	}

	m := b.Client(t)
	m.MustSignIn(b.Users[accounts.Manager])
	if res := m.Get("/admin/audit"); res.StatusCode != http.StatusForbidden {
		t.Errorf("a manager opens the audit page: %d", res.StatusCode)
	}
}

// TestTheAdminsActionsOnTheTrailAreInTheTrail: signing a checkpoint and
// exporting from /admin/audit each record an event by the admin, as they
// were identified, saying what was signed or exported (the period and the
// filter), and the event enters the trail: the next export holds it.
func TestTheAdminsActionsOnTheTrailAreInTheTrail(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	ctx := context.Background()
	admin := b.Users[accounts.Admin]
	err := b.Store.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.InsertEvent(ctx, store.Event{At: b.Now(), ActorKind: "user", ActorID: "usr_ann", Action: "task.created"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	c := b.Client(t)
	c.MustSignIn(admin)
	if res := c.Post("/admin/audit/checkpoint", url.Values{"_csrf": {c.CSRF("/admin/audit")}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign: %d %s", res.StatusCode, res.Text)
	}
	day := time.Now().UTC()
	from, to := day.AddDate(0, 0, -1).Format(time.DateOnly), day.AddDate(0, 0, 1).Format(time.DateOnly)
	res := c.Post("/admin/audit/export", url.Values{"_csrf": {c.CSRF("/admin/audit")}, "from": {from}, "to": {to}, "system": {"shop"}})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("export: %d %s", res.StatusCode, res.Text)
	}
	type recorded struct {
		ActorKind, ActorID string
		Data               map[string]any
	}
	got := map[string]recorded{}
	rows, err := b.Store.Pool().Query(ctx, `SELECT action, actor_kind, actor_id, data FROM events WHERE action LIKE 'audit.%' AND task_id IS NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var action string
		var r recorded
		if err := rows.Scan(&action, &r.ActorKind, &r.ActorID, &r.Data); err != nil {
			t.Fatal(err)
		}
		got[action] = r
	}
	if rows.Err() != nil || len(got) != 2 {
		t.Fatalf("audit events %v (%v), want audit.checkpoint_signed and audit.exported", got, rows.Err())
	}
	for action, r := range got {
		if r.ActorKind != "user" || r.ActorID != strconv.FormatInt(admin.ID, 10) || r.Data["actor_name"] != admin.Name || r.Data["identified_by"] == nil {
			t.Errorf("%s recorded by %s %s (%v), want the admin %d as identified", action, r.ActorKind, r.ActorID, r.Data, admin.ID)
		}
	}
	if size, _ := got["audit.checkpoint_signed"].Data["size"].(float64); size < 1 {
		t.Errorf("the checkpoint's event does not say the size signed: %v", got["audit.checkpoint_signed"].Data)
	}
	ex := got["audit.exported"].Data
	if ex["from"] != from || ex["to"] != to || fmt.Sprint(ex["filter"]) != "map[system:shop]" || ex["lines"] == nil || ex["checkpoint_size"] == nil {
		t.Errorf("the export's event: %v, want from %s to %s, filter system shop, lines and the checkpoint's size", ex, from, to)
	}
	files, err := b.Audit.Export(ctx, audit.Filter{From: day.AddDate(0, 0, -1), To: day.AddDate(0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"audit.checkpoint_signed", "audit.exported"} {
		if !bytes.Contains(files.CSV, []byte(action)) {
			t.Errorf("the trail's next export has no %s", action)
		}
	}
}
