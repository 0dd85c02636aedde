package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"countersign/store"
	"countersign/store/dbtest"
)

// TestNotificationsLeaveAfterCommitOnly: a transaction's notifications
// (its own and its task events') reach a listener after it commits, once
// each, and a rolled-back transaction sends none. The sentinel sent last
// proves the absence without waiting for a timeout.
func TestNotificationsLeaveAfterCommitOnly(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := store.New(dbtest.New(t))
	conn, err := st.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, ch := range []string{store.DispatchChannel, store.TaskEventsChannel, "sentinel"} {
		if _, err := conn.Exec(ctx, `LISTEN "`+ch+`"`); err != nil {
			t.Fatal(err)
		}
	}
	task := "tsk_notify"
	boom := errors.New("roll back")
	err = st.InTx(ctx, func(tx *store.Tx) error {
		_ = tx.Notify(ctx, store.DispatchChannel, "rolled-back")
		if _, err := tx.InsertEvent(ctx, store.Event{At: time.Now(), ActorKind: "system", Action: "test.rolled_back", TaskID: &task}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx: %v, want the callback's error", err)
	}
	err = st.InTx(ctx, func(tx *store.Tx) error {
		_ = tx.Notify(ctx, store.DispatchChannel, "committed")
		_ = tx.Notify(ctx, store.DispatchChannel, "committed") // the same one twice is sent once
		_, err := tx.InsertEvent(ctx, store.Event{At: time.Now(), ActorKind: "system", Action: "test.committed", TaskID: &task})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `SELECT pg_notify('sentinel', 'end')`); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("waiting for notifications: %v (got %v)", err, got)
		}
		if n.Channel == "sentinel" {
			break
		}
		got = append(got, n.Channel+":"+n.Payload)
	}
	want := []string{store.DispatchChannel + ":committed", store.TaskEventsChannel + ":" + task}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("notifications %v, want %v", got, want)
	}
}
