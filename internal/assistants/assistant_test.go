package assistants_test

import (
	"context"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/internal/clocktest"
	"countersign/internal/controlplane"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func setup(t *testing.T) (*assistants.Service, *store.Store, *clocktest.Clock) {
	t.Helper()
	st := store.New(dbtest.New(t))
	clk := clocktest.New(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC))
	reg := adapter.NewRegistry()
	cp := controlplane.New(st, reg, controlplane.Config{}, clk.Now, nil)
	return assistants.New(st, cp, reg, clk.Now), st, clk
}

func TestKeysAreHashedRevocableAndTouchedOnceAMinute(t *testing.T) {
	t.Parallel()
	svc, st, clk := setup(t)
	ctx := context.Background()
	a, err := svc.Create(ctx, nil, "bot")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(ctx, nil, "BOT"); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("a second assistant named BOT: %v, want invalid (names are case-insensitive)", err)
	}
	k, secret, err := svc.IssueKey(ctx, a.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	var stored int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM api_keys WHERE prefix = $1 AND hash <> convert_to($2, 'UTF8')`, k.Prefix, secret).Scan(&stored); err != nil || stored != 1 {
		t.Fatalf("stored key rows: %d, %v", stored, err)
	}
	lastUsed := func() time.Time {
		var at *time.Time
		if err := st.Pool().QueryRow(ctx, `SELECT last_used_at FROM api_keys WHERE id = $1`, k.ID).Scan(&at); err != nil {
			t.Fatal(err)
		}
		if at == nil {
			return time.Time{}
		}
		return at.UTC()
	}
	start := clk.Now()
	if _, _, err := svc.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	clk.Advance(30 * time.Second)
	if _, _, err := svc.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(); !got.Equal(start) {
		t.Errorf("last used %v after a use 30s later, want it kept at %v", got, start)
	}
	clk.Advance(31 * time.Second)
	if _, _, err := svc.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(); !got.Equal(clk.Now()) {
		t.Errorf("last used %v after a minute, want %v", got, clk.Now())
	}
	if _, err := svc.RevokeKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Authenticate(ctx, secret); !apperr.Is(err, apperr.Unauthenticated) {
		t.Errorf("revoked key: %v", err)
	}
	if _, err := svc.RevokeKey(ctx, k.ID); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("revoking twice: %v", err)
	}
}

func TestEventsCheckTheirEnums(t *testing.T) {
	t.Parallel()
	b := setupHandoffs(t)
	svc, a, ctx := b.svc, b.a, context.Background()
	// A hand-off needs a task of the conversation: give it one.
	b.openTasks(t, "c", 1)
	for _, i := range assistants.Intents {
		for _, m := range assistants.Modes {
			e := assistants.Event{ConversationID: "c-0", Intent: i, Mode: m, Summary: "what happened"}
			if _, err := svc.Record(ctx, a, e); err != nil {
				t.Fatalf("%s/%s: %v (the enums must match the CHECK constraints)", i, m, err)
			}
		}
	}
	_, err := svc.Record(ctx, a, assistants.Event{ConversationID: "c-0", Intent: "curious", Mode: "answered"})
	if e, ok := apperr.As(err); !ok || e.Fields["intent"] == "" {
		t.Errorf("a wrong intent: %v", err)
	}
}

// TestRestoreKeyBringsBackAKeptSecretOnly restores a key issued over
// another database: it authenticates again, restoring it twice is the same
// key, and a revoked, foreign or malformed secret is refused.
func TestRestoreKeyBringsBackAKeptSecretOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old, _, _ := setup(t)
	gone, err := old.Create(ctx, nil, "bot")
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := old.IssueKey(ctx, gone.ID, nil)
	if err != nil {
		t.Fatal(err)
	}

	svc, _, _ := setup(t)
	bot, err := svc.Create(ctx, nil, "bot")
	if err != nil {
		t.Fatal(err)
	}
	k, err := svc.RestoreKey(ctx, bot.ID, nil, secret)
	if err != nil {
		t.Fatal(err)
	}
	if a, _, err := svc.Authenticate(ctx, secret); err != nil || a.ID != bot.ID {
		t.Fatalf("the restored key authenticates %q, %v; want %s", a.ID, err, bot.ID)
	}
	if again, err := svc.RestoreKey(ctx, bot.ID, nil, secret); err != nil || again.ID != k.ID {
		t.Errorf("restoring a live key again: %s, %v; want the same key %s", again.ID, err, k.ID)
	}
	other, err := svc.Create(ctx, nil, "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RestoreKey(ctx, other.ID, nil, secret); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("another assistant's secret: %v, want conflict", err)
	}
	if _, err := svc.RevokeKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RestoreKey(ctx, bot.ID, nil, secret); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("a revoked secret: %v, want conflict", err)
	}
	if _, err := svc.RestoreKey(ctx, bot.ID, nil, "csk_live_short"); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("a malformed secret: %v, want invalid", err)
	}
}
