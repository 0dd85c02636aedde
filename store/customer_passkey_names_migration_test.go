package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"countersign/migrations"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestCustomerPasskeyNamesMigrationGoesDownAndUp runs migration 00044's
// Down over a customer's passkey, then its Up: the name goes and comes
// back, a passkey kept before it reading "Passkey".
func TestCustomerPasskeyNamesMigrationGoesDownAndUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	if _, err := st.CustomerWebAuthnHandle(ctx, "shop", "jordan@example.test", []byte{1}); err != nil {
		t.Fatal(err)
	}
	added := store.Event{At: now, ActorKind: "customer", ActorID: "jordan@example.test", Action: "customer_passkey.added", Data: []byte(`{}`)}
	if err := st.InsertCustomerPasskey(ctx, store.CustomerPasskey{System: "shop", CustomerRef: "jordan@example.test", CredentialID: []byte{7},
		PublicKey: []byte{1}, AAGUID: []byte{}, Transports: []string{}, AttestationFormat: "none", Proof: "link", Name: "Safari on iPhone",
		CreatedAt: now}, 10, added); err != nil {
		t.Fatal(err)
	}
	sql, err := migrations.FS.ReadFile("00044_customer_passkey_names.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, down, _ := strings.Cut(string(sql), "-- +goose Down")
	if _, err := st.Pool().Exec(ctx, down); err != nil {
		t.Fatalf("down: %v", err)
	}
	if _, err := st.CustomerPasskeysOf(ctx, "shop", "jordan@example.test"); err == nil || !strings.Contains(err.Error(), "name") {
		t.Fatalf("after the Down the name is still read: %v", err)
	}
	if _, err := st.Pool().Exec(ctx, up); err != nil {
		t.Fatalf("up again: %v", err)
	}
	keys, err := st.CustomerPasskeysOf(ctx, "shop", "jordan@example.test")
	if err != nil || len(keys) != 1 || keys[0].Name != "Passkey" {
		t.Fatalf("after the Up: %+v, %v", keys, err)
	}
}
