package controlplane

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// waitHub fans the notifications of changed invocations out to the waiters
// of this process (AwaitChange): one LISTEN, held while anyone waits, for
// any number of waiters, each woken only by its own invocation. The first
// waiter starts the LISTEN and the last one ends it, so an idle console
// holds no connection for it.
type waitHub struct {
	listen func(ctx context.Context, fn func(id string), status func(err error, retry time.Duration))
	log    *slog.Logger

	mu    sync.Mutex
	subs  map[string]map[chan struct{}]struct{}
	held  int
	stop  context.CancelFunc
	ready chan struct{}
	// released is closed when the process shuts down: every wait answers
	// at once.
	released     chan struct{}
	releasedOnce sync.Once
}

func newWaitHub(listen func(context.Context, func(string), func(error, time.Duration)), log *slog.Logger) *waitHub {
	return &waitHub{listen: listen, log: log, subs: map[string]map[chan struct{}]struct{}{}, released: make(chan struct{})}
}

// subscribe returns a channel that receives a value when invocation id
// changes, a channel closed once the LISTEN is in force (or its first
// attempt failed), and the function that ends the subscription.
func (w *waitHub) subscribe(id string) (<-chan struct{}, <-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs[id] == nil {
		w.subs[id] = map[chan struct{}]struct{}{}
	}
	w.subs[id][ch] = struct{}{}
	if w.held == 0 {
		ctx, cancel := context.WithCancel(context.Background())
		w.stop, w.ready = cancel, make(chan struct{})
		go w.run(ctx, w.ready)
	}
	w.held++
	ready := w.ready
	var once sync.Once
	return ch, ready, func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			delete(w.subs[id], ch)
			if len(w.subs[id]) == 0 {
				delete(w.subs, id)
			}
			w.held--
			if w.held == 0 {
				w.stop()
			}
		})
	}
}

// release ends every wait, now and later, with the state as it is.
func (w *waitHub) release() { w.releasedOnce.Do(func() { close(w.released) }) }

// count is how many subscriptions are held.
func (w *waitHub) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.held
}

// run holds the LISTEN until ctx ends, listening again after a failed
// connection. A notification sent while no LISTEN was in force is lost, so
// when listening resumes after a failure every waiter is woken to read its
// invocation again.
func (w *waitHub) run(ctx context.Context, ready chan struct{}) {
	var once sync.Once
	failed := false
	w.listen(ctx, w.wake, func(err error, retry time.Duration) {
		once.Do(func() { close(ready) })
		if err != nil {
			failed = true
			w.log.Warn("invocation waits: listening failed; listening again", "error", err, "after", retry)
			return
		}
		if failed {
			failed = false
			w.wakeAll()
		}
	})
	once.Do(func() { close(ready) })
}

// wake wakes the waiters of invocation id.
func (w *waitHub) wake(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.subs[id] {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// wakeAll wakes every waiter.
func (w *waitHub) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, subs := range w.subs {
		for ch := range subs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}
