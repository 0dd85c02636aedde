package demoshop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Running is a shop serving HTTP, as Start returns it.
type Running struct {
	// URL is the shop's base URL, e.g. "http://127.0.0.1:43121".
	URL string

	srv      *http.Server
	done     chan struct{}
	serveErr error
}

// Start serves shop on addr until Close; "127.0.0.1:0" picks a free loopback
// port. ctx bounds only the listening; it fails when the address cannot be
// bound.
func Start(ctx context.Context, shop *Shop, addr string) (*Running, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("demoshop: listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           shop.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(shop.log.Handler(), slog.LevelWarn),
	}
	run := &Running{URL: "http://" + ln.Addr().String(), srv: srv, done: make(chan struct{})}
	go func() {
		defer close(run.done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			run.serveErr = err
		}
	}()
	return run, nil
}

// Close stops accepting calls and waits, until ctx ends, for calls in flight
// to finish; then it closes what is left. It returns the server's own error,
// if serving failed, or ctx's error when the wait was cut short. Calling it
// again is harmless.
func (r *Running) Close(ctx context.Context) error {
	err := r.srv.Shutdown(ctx)
	if err != nil {
		_ = r.srv.Close()
	}
	<-r.done
	return errors.Join(err, r.serveErr)
}
