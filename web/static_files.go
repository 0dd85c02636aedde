package web

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"countersign/static"
	"countersign/web/kit"
)

// handleStatic answers GET /static/*: embedded files by content-hashed name.
// A compressible file goes gzipped to a client that accepts gzip, from a
// copy compressed once per process (the compress middleware then leaves it
// alone).
func (s *Server) handleStatic(c echo.Context) error {
	name := strings.TrimPrefix(c.Request().URL.Path, static.Prefix)
	body, ctype, ok := static.Lookup(name)
	if !ok {
		return echo.ErrNotFound
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	if kit.AcceptsGzip(c.Request().Header.Get(echo.HeaderAcceptEncoding)) {
		if gz := staticGzip(name, ctype, body); gz != nil {
			h.Set(echo.HeaderContentEncoding, "gzip")
			return c.Blob(http.StatusOK, ctype, gz)
		}
	}
	return c.Blob(http.StatusOK, ctype, body)
}

// staticGzipped holds each static file's gzipped form (nil: not worth it).
var staticGzipped sync.Map

// staticGzip is a static file gzipped at the best compression, made once;
// nil when the file is not of a compressible type or too small.
func staticGzip(name, ctype string, body []byte) []byte {
	if v, ok := staticGzipped.Load(name); ok {
		return v.([]byte)
	}
	var out []byte
	if kit.WorthCompressing(ctype, len(body)) {
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = w.Write(body)
		_ = w.Close()
		out = buf.Bytes()
	}
	staticGzipped.Store(name, out)
	return out
}
