package fanout_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"countersign/internal/fanout"
)

// fakeChannel is a Listen whose notifications and failures the test sends.
type fakeChannel struct {
	started chan struct{}
	ended   chan struct{}
	notify  chan string
	fail    chan error
}

func newFakeChannel() *fakeChannel {
	return &fakeChannel{started: make(chan struct{}, 8), ended: make(chan struct{}, 8), notify: make(chan string), fail: make(chan error)}
}

func (f *fakeChannel) listen(ctx context.Context, fn func(string), status func(error, time.Duration)) {
	f.started <- struct{}{}
	defer func() { f.ended <- struct{}{} }()
	status(nil, 0)
	for {
		select {
		case <-ctx.Done():
			return
		case key := <-f.notify:
			fn(key)
		case err := <-f.fail:
			status(err, 0)
			status(nil, 0)
		}
	}
}

func pending(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestOneListenWakesEachKeyAndAllAfterAFailure: any number of waiters
// share one LISTEN, started by the first and ended by the last; a
// notification wakes only its key's waiters; a LISTEN in force again after
// a failure wakes every waiter, since what was sent meanwhile is lost.
func TestOneListenWakesEachKeyAndAllAfterAFailure(t *testing.T) {
	f := newFakeChannel()
	h := fanout.New("test", f.listen, slog.New(slog.NewTextHandler(io.Discard, nil)))
	a1, ready, doneA1 := h.Subscribe("a")
	<-ready
	a2, _, doneA2 := h.Subscribe("a")
	b, ready, doneB := h.Subscribe("b")
	<-ready
	if n := len(f.started); n != 1 || h.Count() != 3 {
		t.Fatalf("three waiters: %d LISTENs, %d held; want 1, 3", n, h.Count())
	}
	f.notify <- "a"
	f.notify <- "c" // a synchronous channel: "a" was handed out before this send returned
	if !pending(a1) || !pending(a2) || pending(b) {
		t.Fatalf("a notified: woken a %v %v, b %v; want a's two only", pending(a1), pending(a2), pending(b))
	}
	f.fail <- errors.New("connection lost")
	f.notify <- "c"
	if !pending(a1) || !pending(a2) || !pending(b) {
		t.Fatal("listening again after a failure: every waiter must be woken")
	}
	doneA1()
	doneA1()
	doneA2()
	if len(f.ended) != 0 || h.Count() != 1 {
		t.Fatalf("one waiter left: the LISTEN ended (%d) or %d held, want it held for 1", len(f.ended), h.Count())
	}
	doneB()
	<-f.ended
	if h.Count() != 0 {
		t.Fatalf("%d held after the last waiter left", h.Count())
	}
}
