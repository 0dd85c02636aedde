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

// TestPasskeyMigrationGoesDownAndUp runs migration 00037's Down over a
// database holding a passkey and a ceremony, then its Up again: the Down
// leaves staff_factors as 00036 made it (its passkey rows gone, the kind
// check back), and the Up applies again.
func TestPasskeyMigrationGoesDownAndUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	var userID int64
	if err := st.Pool().QueryRow(ctx, `INSERT INTO users (email, name, role, password_hash, created_at)
		VALUES ('a@example.test', 'A', 'agent', 'x', $1) RETURNING id`, now).Scan(&userID); err != nil {
		t.Fatal(err)
	}
	if err := st.InsertPasskey(ctx, store.Passkey{UserID: userID, Name: "Key", CredentialID: []byte{1}, PublicKey: []byte{2},
		Transports: []string{"internal"}, AAGUID: []byte{}, AttestationFormat: "none", CreatedAt: now},
		store.Event{At: now, ActorKind: "user", ActorID: "1", Action: "factor.added", Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := st.StartCeremony(ctx, []byte{9}, userID, store.CeremonySignIn, []byte(`{}`), now, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	sql, err := migrations.FS.ReadFile("00037_passkeys.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, down, _ := strings.Cut(string(sql), "-- +goose Down")
	if _, err := st.Pool().Exec(ctx, down); err != nil {
		t.Fatalf("down: %v", err)
	}
	if _, err := st.Pool().Exec(ctx, `INSERT INTO staff_factors (user_id, kind, created_at) VALUES ($1, 'passkey', $2)`,
		userID, now); err == nil {
		t.Fatal("after the Down a passkey factor is still allowed")
	}
	if _, err := st.Pool().Exec(ctx, up); err != nil {
		t.Fatalf("up again: %v", err)
	}
}
