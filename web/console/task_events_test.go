package console_test

import (
	"bufio"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/jackc/pgx/v5"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/store"
)

// TestTaskEventsListenAgainAfterTheConnectionDies terminates the backend
// that holds the live task view's LISTEN, as a database restart or a
// failover would: the console listens again, and a change made afterwards
// still reaches the open stream.
func TestTaskEventsListenAgainAfterTheConnectionDies(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.Server.URL+"/tasks/"+f.Task.ID+"/events", nil)
	res, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	lines := bufio.NewReader(res.Body)
	readUntil := func(want string) {
		t.Helper()
		for {
			l, err := lines.ReadString('\n')
			if err != nil {
				t.Fatalf("the stream ended before %q: %v", want, err)
			}
			if strings.HasPrefix(l, want) {
				return
			}
		}
	}
	readUntil(": watching") // written once the LISTEN is in force

	pool := b.Store.Pool()
	listeners := func() []int32 {
		t.Helper()
		rows, _ := pool.Query(ctx, `SELECT pid FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'LISTEN '||$1 ORDER BY pid`, store.TaskEventsChannel)
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			t.Fatal(err)
		}
		return pids
	}
	old := listeners()
	if len(old) != 1 {
		t.Fatalf("listening backends %v, want one", old)
	}
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, old[0]); err != nil {
		t.Fatal(err)
	}

	// Wait, up to a deadline, for a new backend to listen: a NOTIFY sent
	// before it would be lost, and no restart at all fails here.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(15 * time.Second)
	for {
		pids := listeners()
		if len(pids) == 1 && !slices.Contains(old, pids[0]) {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("no new LISTEN after terminating backend %d (listening now: %v)", old[0], pids)
		case <-tick.C:
		}
	}

	// A change made while nothing listened would be lost: listening again
	// wakes the page to fetch what it may have missed, with no new change.
	readUntil("event: change")

	if _, err := b.Control.ChangeTask(ctx, controlplane.AssistantActor("asst_test", "Test assistant"), f.Task.ID, controlplane.TaskPause, 0); err != nil {
		t.Fatal(err)
	}
	readUntil("event: change")
}
