package console_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
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
	if err != nil || r.Lines != 1 || !bytes.Contains(files["trail.csv"], []byte("usr_ann")) {
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
