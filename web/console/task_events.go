package console

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// taskEvents is where the live task pages learn of new task events
// (*controlplane.Service, over the store's LISTEN).
type taskEvents interface {
	ListenTaskEvents(ctx context.Context, fn func(taskID string), status func(err error, retry time.Duration))
}

// taskWatch fans PostgreSQL's task-event notifications out to the task
// pages open on this console instance. It holds a listening connection
// only while someone watches: the first watcher starts it, the last one
// stops it.
type taskWatch struct {
	events taskEvents
	log    *slog.Logger

	mu     sync.Mutex
	subs   map[string]map[chan struct{}]struct{}
	stop   context.CancelFunc
	ready  chan struct{}
	active int
}

func newTaskWatch(events taskEvents, log *slog.Logger) *taskWatch {
	return &taskWatch{events: events, log: log, subs: map[string]map[chan struct{}]struct{}{}}
}

// subscribe returns a channel that receives a value when the task gets a
// new event, a channel closed once the LISTEN is in force, and the
// function that ends the subscription.
func (w *taskWatch) subscribe(taskID string) (<-chan struct{}, <-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs[taskID] == nil {
		w.subs[taskID] = map[chan struct{}]struct{}{}
	}
	w.subs[taskID][ch] = struct{}{}
	if w.active == 0 {
		ctx, cancel := context.WithCancel(context.Background())
		ready := make(chan struct{})
		w.stop, w.ready = cancel, ready
		go w.listen(ctx, ready)
	}
	w.active++
	ready := w.ready
	return ch, ready, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.subs[taskID], ch)
		if len(w.subs[taskID]) == 0 {
			delete(w.subs, taskID)
		}
		w.active--
		if w.active == 0 {
			w.stop()
		}
	}
}

// listen holds the LISTEN until ctx ends (listening again after a failed
// connection). ready is closed after the first attempt, whether it listens
// or fails. A notification sent while no LISTEN was in force is lost, so
// when listening resumes after a failure every open page is woken to fetch
// what it may have missed.
func (w *taskWatch) listen(ctx context.Context, ready chan struct{}) {
	var once sync.Once
	failed := false
	w.events.ListenTaskEvents(ctx, w.notify, func(err error, retry time.Duration) {
		once.Do(func() { close(ready) })
		if err != nil {
			failed = true
			w.log.Warn("task events: listening failed; listening again", "error", err, "after", retry)
			return
		}
		if failed {
			failed = false
			w.wakeAll()
		}
	})
	once.Do(func() { close(ready) })
}

// wakeAll wakes every page watching any task.
func (w *taskWatch) wakeAll() {
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

// notify wakes the pages watching taskID.
func (w *taskWatch) notify(taskID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.subs[taskID] {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// handleTaskEvents answers GET /tasks/:id/events: a server-sent event
// stream that says "change" whenever the task gets a new event, fed by
// PostgreSQL LISTEN/NOTIFY so that a change made through any console
// instance reaches every open page. The page then fetches its live
// fragment; the stream carries no data of its own.
func (h *Handler) handleTaskEvents(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	if _, err := h.cfg.Control.Task(ctx, id); err != nil {
		return err
	}
	wake, ready, stop := h.tasks.subscribe(id)
	defer stop()
	<-ready
	hdr := c.Response().Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Accel-Buffering", "no")
	c.Response().WriteHeader(http.StatusOK)
	// The server's write timeout ends a stream after a minute; EventSource
	// reconnects by itself, and the retry hint makes that quick. A change
	// committed between the page's render (or the last stream's end) and
	// this LISTEN would be lost, so the stream opens with one catch-up
	// "change": the page fetches its state as of now, and every later
	// change arrives through NOTIFY. ": watching" follows it.
	if _, err := fmt.Fprint(c.Response(), "retry: 1000\nevent: change\ndata: "+id+"\n\n: watching\n\n"); err != nil {
		return nil
	}
	c.Response().Flush()
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
			if _, err := fmt.Fprint(c.Response(), "event: change\ndata: "+id+"\n\n"); err != nil {
				return nil
			}
		case <-keepAlive.C:
			if _, err := fmt.Fprint(c.Response(), ": still here\n\n"); err != nil {
				return nil
			}
		}
		c.Response().Flush()
	}
}
