package store_test

import (
	"context"
	"io/fs"
	"testing"

	"countersign/migrations"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func TestMigrationsApplyToEmptyDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.NewBare(t)
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no embedded migrations: %v", err)
	}

	pending, err := store.New(pool).MigrationsPending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pending != len(files) {
		t.Errorf("pending before = %d, want %d", pending, len(files))
	}
	applied, err := store.Migrate(ctx, pool)
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if applied != len(files) {
		t.Errorf("applied = %d, want %d", applied, len(files))
	}
	if pending, _ := store.New(pool).MigrationsPending(ctx); pending != 0 {
		t.Errorf("pending after = %d, want 0", pending)
	}
	again, err := store.Migrate(ctx, pool)
	if err != nil || again != 0 {
		t.Errorf("second Migrate = %d, %v; want 0, nil", again, err)
	}
}
