package assistants_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/store"
)

// storedEvents counts an assistant's kept conversation events.
func storedEvents(t *testing.T, st *store.Store, assistantID string) int {
	t.Helper()
	var n int
	if err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM conversation_events WHERE assistant_id = $1`,
		assistantID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func answered(conversation string) assistants.Event {
	return assistants.Event{ConversationID: conversation, Intent: assistants.IntentInformational, Mode: assistants.ModeAnswered}
}

// TestEventBoundsHoldUnderRace races more requests than a bound allows
// against real PostgreSQL, as two consoles' requests would: on one
// conversation, and on as many conversations as requests. Exactly the
// bound is kept each time, and every other request is refused 429-kind.
func TestEventBoundsHoldUnderRace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		limits assistants.EventLimits
		conv   func(i int) string
		bound  int
	}{
		{"one conversation", assistants.EventLimits{PerConversationHour: 7}, func(int) string { return "conv-race" }, 7},
		{"an assistant's minute", assistants.EventLimits{PerAssistantMinute: 9}, func(i int) string { return fmt.Sprintf("conv-%d", i) }, 9},
		{"an assistant's hour", assistants.EventLimits{PerAssistantHour: 5}, func(i int) string { return fmt.Sprintf("conv-%d", i) }, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			svc, st, _ := setup(t)
			svc.SetEventLimits(c.limits)
			a, err := svc.Create(context.Background(), nil, "racer")
			if err != nil {
				t.Fatal(err)
			}
			const racers = 24
			start := make(chan struct{})
			errs := make([]error, racers)
			var wg sync.WaitGroup
			for i := range racers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, errs[i] = svc.Record(context.Background(), a, answered(c.conv(i)))
				}()
			}
			close(start)
			wg.Wait()
			ok, limited := 0, 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case apperr.Is(err, apperr.LimitReached):
					limited++
				default:
					t.Errorf("a racer: %v", err)
				}
			}
			if ok != c.bound || limited != racers-c.bound || storedEvents(t, st, a.ID) != c.bound {
				t.Errorf("%d kept, %d limited, %d stored; want %d kept and stored, %d limited", ok, limited,
					storedEvents(t, st, a.ID), c.bound, racers-c.bound)
			}
		})
	}
}

// TestEventBoundsPerWindow: each bound refuses with its code, the seconds
// to the end of its window and a hint; a refused event counts in no
// window; the next window takes events again; one assistant's bounds are
// not another's; an event larger than MaxEventBytes is refused whole.
func TestEventBoundsPerWindow(t *testing.T) {
	t.Parallel()
	svc, st, clk := setup(t)
	ctx := context.Background()
	svc.SetEventLimits(assistants.EventLimits{PerAssistantMinute: 3, PerAssistantHour: 5, PerConversationHour: 2})
	a, _ := svc.Create(ctx, nil, "bounded")
	other, _ := svc.Create(ctx, nil, "other")
	clk.Advance(15 * time.Second) // 09:00:15
	record := func(asst assistants.Assistant, conv string) error {
		_, err := svc.Record(ctx, asst, answered(conv))
		return err
	}
	refusal := func(err error, code string, retryAfter int) {
		t.Helper()
		e, ok := apperr.As(err)
		if !ok {
			t.Errorf("got %v, want %s", err, code)
		} else if e.Kind != apperr.LimitReached || e.Code != code || e.RetryAfterSeconds != retryAfter || e.Hint == "" {
			t.Errorf("got %v (retry after %d), want %s with a hint, retry after %d", err, e.RetryAfterSeconds, code, retryAfter)
		}
	}
	for _, conv := range []string{"c1", "c1"} {
		if err := record(a, conv); err != nil {
			t.Fatal(err)
		}
	}
	refusal(record(a, "c1"), "conversation_event_limit", 3600-15)
	if err := record(a, "c2"); err != nil {
		t.Fatalf("the third event of the minute, after a refused one: %v", err)
	}
	refusal(record(a, "c3"), "event_rate_limited", 45)
	if err := record(other, "o1"); err != nil {
		t.Errorf("another assistant, while this one's minute is full: %v", err)
	}
	clk.Advance(time.Minute)
	for _, conv := range []string{"c3", "c4"} {
		if err := record(a, conv); err != nil {
			t.Fatalf("the next minute: %v", err)
		}
	}
	refusal(record(a, "c5"), "event_rate_limited", 3600-75)
	if got := storedEvents(t, st, a.ID); got != 5 {
		t.Errorf("%d events kept, want the hour's 5", got)
	}
	clk.Advance(time.Hour)
	if err := record(a, "c1"); err != nil {
		t.Errorf("the next hour: %v", err)
	}

	big := answered("c9")
	big.Summary = strings.Repeat("x", 3900)
	big.Facts = map[string]any{"log": strings.Repeat("x", 30000)}
	if _, err := svc.Record(ctx, a, big); !apperr.Is(err, apperr.TooLarge) {
		t.Errorf("a 34,000-byte event: %v, want too large", err)
	}
}

// TestPruningEndedWindowsKeepsTheBounds prunes the event windows: the
// ones of the hour still running are kept, so a conversation at its bound
// stays refused; once the hour has passed every row of it goes, and the
// next event starts a new window.
func TestPruningEndedWindowsKeepsTheBounds(t *testing.T) {
	t.Parallel()
	svc, st, clk := setup(t)
	ctx := context.Background()
	svc.SetEventLimits(assistants.EventLimits{PerConversationHour: 2})
	a, _ := svc.Create(ctx, nil, "pruned")
	windows := func() int {
		t.Helper()
		var n int
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM conversation_event_windows`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for range 2 {
		if _, err := svc.Record(ctx, a, answered("full")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.Record(ctx, a, answered("other")); err != nil {
		t.Fatal(err)
	}
	before := windows() // the assistant's minute and hour, and two conversations' hours
	clk.Advance(30 * time.Minute)
	if n, err := svc.PruneEventWindows(ctx); err != nil || n != 0 || windows() != before {
		t.Fatalf("pruning within the hour: %d deleted (%v), %d rows of %d left; want none deleted", n, err, windows(), before)
	}
	if _, err := svc.Record(ctx, a, answered("full")); !apperr.Is(err, apperr.LimitReached) {
		t.Errorf("a conversation at its bound after a prune within its hour: %v, want refused", err)
	}
	clk.Advance(2 * time.Hour)
	if n, err := svc.PruneEventWindows(ctx); err != nil || n != int64(before) || windows() != 0 {
		t.Fatalf("pruning after the hour: %d deleted (%v), %d left; want all %d deleted", n, err, windows(), before)
	}
	if _, err := svc.Record(ctx, a, answered("full")); err != nil {
		t.Errorf("the conversation's next hour, after the prune: %v", err)
	}
}
