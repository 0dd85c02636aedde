package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"countersign/migrations"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestCustomerPasskeyMigrationGoesDownAndUp runs migration 00041's Down
// over a database holding a customer's passkey and ceremony, then its Up
// again; between them, and before, the store keeps what the rules need: a
// passkey's proof is never a code, a credential is registered once, a
// ceremony is taken once and only by its customer, request and purpose.
func TestCustomerPasskeyMigrationGoesDownAndUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	if _, err := st.CustomerWebAuthnHandle(ctx, "shop", "jordan@example.test", []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	key := store.CustomerPasskey{System: "shop", CustomerRef: "jordan@example.test", CredentialID: []byte{7}, PublicKey: []byte{1},
		AAGUID: []byte{}, Transports: []string{}, AttestationFormat: "none", Proof: "link", CreatedAt: now}
	added := store.Event{At: now, ActorKind: "customer", ActorID: "jordan@example.test", Action: "customer_passkey.added", Data: []byte(`{}`)}
	if err := st.InsertCustomerPasskey(ctx, key, 10, added); err != nil {
		t.Fatalf("a passkey added after a link: %v", err)
	}
	if err := st.InsertCustomerPasskey(ctx, key, 10, added); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("the same credential twice: %v, want ErrConflict", err)
	}
	key.CredentialID, key.Proof = []byte{8}, "code"
	if err := st.InsertCustomerPasskey(ctx, key, 10, added); err == nil {
		t.Fatal("the table took a passkey added after a typed code")
	}
	who := store.CustomerCeremony{System: "shop", CustomerRef: "jordan@example.test", InvocationID: "inv_1", Purpose: store.CustomerCeremonyDecide}
	if err := st.StartCustomerCeremony(ctx, []byte{9}, who, []byte(`{}`), now, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, other := range []store.CustomerCeremony{
		{System: "shop", CustomerRef: "jordan@example.test", InvocationID: "inv_2", Purpose: store.CustomerCeremonyDecide},
		{System: "shop", CustomerRef: "jordan@example.test", InvocationID: "inv_1", Purpose: store.CustomerCeremonyRegister},
		{System: "shop", CustomerRef: "someone@example.test", InvocationID: "inv_1", Purpose: store.CustomerCeremonyDecide},
	} {
		if _, err := st.TakeCustomerCeremony(ctx, []byte{9}, other, now); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("taken as %+v: %v", other, err)
		}
	}
	if _, err := st.TakeCustomerCeremony(ctx, []byte{9}, who, now); err != nil {
		t.Fatalf("taken by its own: %v", err)
	}
	if _, err := st.TakeCustomerCeremony(ctx, []byte{9}, who, now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("taken twice: %v", err)
	}
	sql, err := migrations.FS.ReadFile("00041_customer_passkeys.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, down, _ := strings.Cut(string(sql), "-- +goose Down")
	if _, err := st.Pool().Exec(ctx, down); err != nil {
		t.Fatalf("down: %v", err)
	}
	if _, err := st.Pool().Exec(ctx, up); err != nil {
		t.Fatalf("up again: %v", err)
	}
}
