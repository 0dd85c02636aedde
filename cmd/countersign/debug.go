package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"time"
)

// debugHandler serves Go's profiler (net/http/pprof) under /debug/pprof/.
// It is mounted only on -debug-addr's own listener, never on the console's
// address.
func debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// loopback reports whether addr's host is a loopback address or localhost.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// serveDebug serves debugHandler on addr until ctx ends.
func serveDebug(ctx context.Context, log *slog.Logger, addr string) {
	if !loopback(addr) {
		log.Warn("the profiler listens beyond loopback: anyone who reaches it can read the process's memory profile and stacks", "addr", addr)
	}
	// No WriteTimeout: a CPU profile or a trace streams for as long as asked.
	srv := &http.Server{Addr: addr, Handler: debugHandler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info("profiler listening", "url", "http://"+addr+"/debug/pprof/")
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("profiler stopped", "err", err)
	}
}
