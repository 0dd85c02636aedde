package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"
)

// serveTelemetry serves the Prometheus handler on its own address until
// ctx ends; it is kept off the console's address, whose /metrics is the
// manager's page.
func serveTelemetry(ctx context.Context, log *slog.Logger, addr string, h http.Handler) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info("prometheus telemetry listening", "url", "http://"+addr+"/metrics")
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("prometheus telemetry server stopped", "err", err)
	}
}
