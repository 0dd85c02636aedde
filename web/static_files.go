package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/static"
)

// handleStatic answers GET /static/*: embedded files by content-hashed name.
func (s *Server) handleStatic(c echo.Context) error {
	body, ctype, ok := static.Lookup(strings.TrimPrefix(c.Request().URL.Path, static.Prefix))
	if !ok {
		return echo.ErrNotFound
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	return c.Blob(http.StatusOK, ctype, body)
}
