// Package fanout hands the notifications of one PostgreSQL channel to the
// goroutines of this process that wait on them, each for one key (a task
// id, an invocation id): one LISTEN for any number of waiters, held only
// while someone waits. The console's live task pages and the API's long
// polls both wait this way.
package fanout

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Listen follows one channel until ctx ends, calling fn with each
// notification's payload and status as store.Listen does: nil once a
// LISTEN is in force, the error and the wait before the next attempt when
// listening failed.
type Listen func(ctx context.Context, fn func(key string), status func(err error, retry time.Duration))

// Hub fans the notifications of one channel out to the waiters of this
// process, each woken only by its own key. The first waiter starts the
// LISTEN and the last one ends it, so an idle console holds no connection
// for it.
type Hub struct {
	what   string
	listen Listen
	log    *slog.Logger

	mu    sync.Mutex
	subs  map[string]map[chan struct{}]struct{}
	stop  context.CancelFunc
	ready chan struct{}
}

// New returns a hub over listen; what names its waiters in the log
// ("task events").
func New(what string, listen Listen, log *slog.Logger) *Hub {
	return &Hub{what: what, listen: listen, log: log, subs: map[string]map[chan struct{}]struct{}{}}
}

// Subscribe returns a channel that receives a value when key is notified,
// a channel closed once the LISTEN is in force (or its first attempt
// failed), and the function that ends the subscription (once, however
// often it is called).
func (h *Hub) Subscribe(key string) (wake <-chan struct{}, ready <-chan struct{}, done func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) == 0 {
		ctx, cancel := context.WithCancel(context.Background())
		h.stop, h.ready = cancel, make(chan struct{})
		go h.run(ctx, h.ready)
	}
	if h.subs[key] == nil {
		h.subs[key] = map[chan struct{}]struct{}{}
	}
	h.subs[key][ch] = struct{}{}
	var once sync.Once
	return ch, h.ready, func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			delete(h.subs[key], ch)
			if len(h.subs[key]) == 0 {
				delete(h.subs, key)
			}
			if len(h.subs) == 0 {
				h.stop()
			}
		})
	}
}

// Count is how many subscriptions are held.
func (h *Hub) Count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, subs := range h.subs {
		n += len(subs)
	}
	return n
}

// run holds the LISTEN until ctx ends, listening again after a failed
// connection; ready is closed after the first attempt, whether it listens
// or fails. A notification sent while no LISTEN was in force is lost, so
// when listening resumes after a failure every waiter is woken to read
// what it may have missed.
func (h *Hub) run(ctx context.Context, ready chan struct{}) {
	var once sync.Once
	failed := false
	h.listen(ctx, h.wake, func(err error, retry time.Duration) {
		once.Do(func() { close(ready) })
		if err != nil {
			failed = true
			h.log.Warn(h.what+": listening failed; listening again", "error", err, "after", retry)
			return
		}
		if failed {
			failed = false
			h.wakeAll()
		}
	})
	once.Do(func() { close(ready) })
}

// wake wakes the waiters of key.
func (h *Hub) wake(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[key] {
		poke(ch)
	}
}

// wakeAll wakes every waiter.
func (h *Hub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, subs := range h.subs {
		for ch := range subs {
			poke(ch)
		}
	}
}

// poke leaves a wake-up on ch unless one is already pending.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
