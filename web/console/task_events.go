package console

import (
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

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
	wake, ready, stop := h.tasks.Subscribe(id)
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
