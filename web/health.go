package web

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// Database is what the readiness probe asks of the database (*store.Store).
type Database interface {
	Ping(ctx context.Context) error
	MigrationsPending(ctx context.Context) (int, error)
}

// handleHealthz answers GET /healthz: the process is up.
func (s *Server) handleHealthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz answers GET /readyz: the database answers and every
// migration is applied; 503 otherwise, saying which.
func (s *Server) handleReadyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if err := s.cfg.Database.Ping(ctx); err != nil {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "database unreachable"})
	}
	pending, err := s.cfg.Database.MigrationsPending(ctx)
	if err != nil {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "migration status unknown"})
	}
	if pending > 0 {
		return c.JSON(http.StatusServiceUnavailable, map[string]any{"status": "migrations pending", "pending": pending})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}
