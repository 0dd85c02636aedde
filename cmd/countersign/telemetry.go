package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"countersign/store"
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

// seedDemoHistory gives the demo 40 days of settled history (3,000
// invocations, 800 conversations) so that the metrics pages show something
// to read; it loads once.
func seedDemoHistory(ctx context.Context, st *store.Store) error {
	return st.GenerateHistory(ctx, store.HistorySpec{Prefix: "demo_h", Invocations: 3000, Conversations: 800, Days: 40,
		End: time.Now(), AssistantID: "asst_demo_history", Finished: true})
}
