package apperr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"countersign/internal/apperr"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestStoreNotFoundIsNotFound holds the store to deciding not-found where
// the row is missing: each lookup of a row that does not exist answers an
// error that is still store.ErrNotFound and that apperr reads as NotFound
// with the noun the callers' own messages used to name, wrapped or not.
func TestStoreNotFoundIsNotFound(t *testing.T) {
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	now := time.Now()
	for _, tc := range []struct {
		name   string
		lookup func() error
		want   string
	}{
		{"task", func() error { _, err := st.Task(ctx, "t_missing"); return err }, "No such task."},
		{"invocation", func() error { _, err := st.Invocation(ctx, "inv_missing"); return err }, "No such invocation."},
		{"queue card", func() error { _, err := st.QueueItem(ctx, "inv_missing", now); return err }, "No such request."},
		{"assistant", func() error { _, err := st.Assistant(ctx, "a_missing"); return err }, "No such assistant."},
		{"key", func() error { _, err := st.RevokeAPIKey(ctx, "k_missing", now); return err }, "No such live key."},
		{"user", func() error { _, err := st.UserByID(ctx, 404); return err }, "No such user."},
		{"hand-off", func() error { _, err := st.HandoffConversation(ctx, 404); return err }, "No such hand-off."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.lookup()
			if !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("err = %v, want store.ErrNotFound", err)
			}
			for _, e := range []error{err, fmt.Errorf("controlplane: load: %w", err)} {
				got, ok := apperr.As(e)
				if !ok || got.Kind != apperr.NotFound || got.Message != tc.want || got.CodeOrKind() != "not_found" {
					t.Fatalf("apperr.As(%v) = %+v, %v; want kind not_found, message %q", e, got, ok, tc.want)
				}
				if !errors.Is(got, store.ErrNotFound) {
					t.Errorf("apperr.As(%v) lost its cause %v", e, err)
				}
				if !apperr.Is(e, apperr.NotFound) {
					t.Errorf("apperr.Is(%v, NotFound) = false", e)
				}
			}
		})
	}
}

// TestCallerWordsWin: a caller that gives a missing row words (or a kind)
// of its own is heard, not the store's default.
func TestCallerWordsWin(t *testing.T) {
	missing := fmt.Errorf("store: policy x/y: %w", &store.NotFoundError{What: "policy"})
	for _, tc := range []struct {
		err  error
		kind apperr.Kind
		msg  string
	}{
		{apperr.Wrap(missing, apperr.NotFound, "This action has no policy yet."), apperr.NotFound, "This action has no policy yet."},
		{fmt.Errorf("webhooks: %w", apperr.Wrap(missing, apperr.Conflict, "Being sent.")), apperr.Conflict, "Being sent."},
		{&store.NotFoundError{}, apperr.NotFound, "Not found."},
	} {
		got, ok := apperr.As(tc.err)
		if !ok || got.Kind != tc.kind || got.Message != tc.msg {
			t.Errorf("apperr.As(%v) = %+v, %v; want %s %q", tc.err, got, ok, tc.kind, tc.msg)
		}
	}
	for _, err := range []error{errors.New("boom"), store.ErrConflict, nil} {
		if _, ok := apperr.As(err); ok || (err != nil && apperr.KindOf(err) != apperr.Internal) {
			t.Errorf("%v reads as an application error, want none (Internal)", err)
		}
	}
}
