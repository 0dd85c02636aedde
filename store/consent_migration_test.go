package store_test

import (
	"context"
	"strings"
	"testing"

	"countersign/migrations"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestConsentMigrationGoesDownAndUp runs migration 00042's Down, then its
// Up again: the consents' table goes and comes back, and a decision other
// than confirm or decline, a digest that is not SHA-256's length and a
// signature without its credential are refused by its CHECKs.
func TestConsentMigrationGoesDownAndUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	sql, err := migrations.FS.ReadFile("00042_customer_consents.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, down, _ := strings.Cut(string(sql), "-- +goose Down")
	if _, err := st.Pool().Exec(ctx, down); err != nil {
		t.Fatalf("down: %v", err)
	}
	if _, err := st.ConsentOf(ctx, "inv_1"); err == nil || !strings.Contains(err.Error(), "customer_consents") {
		t.Fatalf("after the Down the consents are still read: %v", err)
	}
	if _, err := st.Pool().Exec(ctx, up); err != nil {
		t.Fatalf("up again: %v", err)
	}
	for name, values := range map[string]string{
		"a decision of neither kind": `'maybe', decode(repeat('00', 32), 'hex'), NULL, NULL`,
		"a short digest":             `'confirm', '\x00'::bytea, NULL, NULL`,
		"a signature alone":          `'confirm', decode(repeat('00', 32), 'hex'), NULL, '\x01'::bytea`,
	} {
		_, err := st.Pool().Exec(ctx, `INSERT INTO customer_consents (invocation_id, customer_ref, proof, decision, quote_digest,
			credential_id, signature, quote_version, quote, args_hash, decided_at) VALUES ('inv_1', 'c', 'code', `+values+`, 1, '{}', '\x00', now())`)
		if err == nil || !strings.Contains(err.Error(), "check constraint") {
			t.Errorf("%s: %v, want a check constraint's refusal", name, err)
		}
	}
}
