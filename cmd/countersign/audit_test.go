package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"countersign/internal/audit"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestAuditExportThenVerify: the cron's `audit export` of a period writes
// the three files and prints the command that checks them; `audit verify`
// passes them, and fails (status 1, with the reason) once a line changed.
func TestAuditExportThenVerify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := dbtest.NewURL(t)
	pool, err := store.Open(ctx, dbURL, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st := store.New(pool)
	for i := range 3 {
		err := st.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.InsertEvent(ctx, store.Event{At: time.Now(), ActorKind: "user", ActorID: "usr_ann", Action: "task.created",
				Data: []byte(`{"i": ` + string(rune('0'+i)) + `}`)})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	skey, vkey, err := audit.GenerateKey("countersign.test/audit")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "audit-key")
	if err := os.WriteFile(keyFile, []byte(skey), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": dbURL, "AUDIT_SIGNING_KEY_FILE": keyFile}
	prefix := filepath.Join(dir, "december")
	day := time.Now().UTC()
	var out, errOut bytes.Buffer
	code := runAudit(ctx, []string{"export", "-from", day.AddDate(0, 0, -1).Format(time.DateOnly),
		"-to", day.AddDate(0, 0, 1).Format(time.DateOnly), "-out", prefix}, &out, &errOut, func(k string) string { return env[k] })
	if code != 0 || !strings.Contains(out.String(), "countersign audit verify -key "+vkey+" "+prefix+".jsonl") {
		t.Fatalf("export: status %d\n%s%s", code, out.String(), errOut.String())
	}
	verify := func() (int, string) {
		var out, errOut bytes.Buffer
		code := runAudit(ctx, []string{"verify", "-key", vkey, prefix + ".jsonl"}, &out, &errOut, nil)
		return code, out.String() + errOut.String()
	}
	if code, said := verify(); code != 0 || !strings.HasPrefix(said, "OK: 3 lines, leaves 0 to 2") {
		t.Fatalf("verify: status %d: %s", code, said)
	}
	jl, err := os.ReadFile(prefix + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prefix+".jsonl", bytes.Replace(jl, []byte(`\"i\": 1`), []byte(`\"i\": 7`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "FAILED: line 3 (leaf 1): the line differs from what was exported: it was changed\n"
	if code, said := verify(); code != 1 || said != want {
		t.Errorf("verify of a changed line: status %d: %q, want 1: %q", code, said, want)
	}
}
