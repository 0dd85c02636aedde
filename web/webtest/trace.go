package webtest

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Statements records the SQL statements a console sends while on.
type Statements struct {
	mu  sync.Mutex
	on  bool
	sql []string
}

// TraceQueryStart records the statement while recording is on.
func (s *Statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on {
		s.sql = append(s.sql, strings.Join(strings.Fields(d.SQL), " "))
	}
	return ctx
}

// TraceQueryEnd is part of pgx.QueryTracer.
func (s *Statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// During returns the statements sent while fn ran.
func (s *Statements) During(fn func()) []string {
	s.mu.Lock()
	s.on, s.sql = true, nil
	s.mu.Unlock()
	fn()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = false
	return s.sql
}

// HeaderLog keeps the headers of every request a handler was sent.
type HeaderLog struct {
	Mu  sync.Mutex
	Got []http.Header
}

// wrap records the headers of each request before h serves it.
func (l *HeaderLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.Mu.Lock()
		l.Got = append(l.Got, r.Header.Clone())
		l.Mu.Unlock()
		h.ServeHTTP(w, r)
	})
}
