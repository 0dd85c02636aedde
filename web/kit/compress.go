package kit

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/labstack/echo/v4"
)

// gzipMinLength is the smallest body worth compressing: below it gzip's
// header and the CPU cost outweigh the bytes saved.
const gzipMinLength = 1024

// compressible lists the media types sent gzipped (HTML, JSON, CSS,
// JavaScript, SVG). Everything else — event streams above all, whose
// events must leave at once — goes as it is.
var compressible = map[string]bool{
	"text/html": true, "application/json": true, "text/css": true, "text/javascript": true,
	"application/javascript": true, "image/svg+xml": true,
}

// WorthCompressing reports whether a body of this media type and size is
// sent gzipped.
func WorthCompressing(ctype string, size int) bool {
	mt, _, err := mime.ParseMediaType(ctype)
	return err == nil && compressible[mt] && size >= gzipMinLength
}

// gzipWriters compress pages and JSON at gzip's best speed: most of the
// bytes saved for a fraction of the CPU (static files are compressed once,
// at the best compression, by handleStatic). klauspost/compress's gzip
// (already in the module graph) is the standard library's format at about
// half its CPU at this level: on the queue page, compressing cost as much
// as rendering.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// Compress gzips responses of the compressible types of at least
// gzipMinLength bytes for clients that send Accept-Encoding: gzip. Every
// response says Vary: Accept-Encoding, so a shared cache keeps the two
// forms of a static file (same URL, same immutable Cache-Control) apart.
// The decision waits for the status, the type and the first kilobyte:
// redirects, 304s, tiny answers and text/event-stream go out untouched. An
// error page rendered after the handler returned goes out uncompressed.
func (s *Site) Compress(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		res := c.Response()
		res.Header().Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
		req := c.Request()
		if req.Method == http.MethodHead || !AcceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding)) {
			return next(c)
		}
		w := &gzipWriter{rw: res.Writer}
		res.Writer = w
		defer func() {
			w.finish()
			res.Writer = w.rw
		}()
		return next(c)
	}
}

// AcceptsGzip reports whether an Accept-Encoding header allows gzip (a
// q=0 refuses it).
func AcceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		if q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// gzipWriter holds a response's status and first bytes until it knows
// whether to compress: then it writes them through gzip or as they are.
type gzipWriter struct {
	rw      http.ResponseWriter
	code    int
	buf     []byte
	decided bool
	gz      *gzip.Writer
}

func (w *gzipWriter) Header() http.Header { return w.rw.Header() }

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *gzipWriter) Unwrap() http.ResponseWriter { return w.rw }

func (w *gzipWriter) WriteHeader(code int) {
	if w.decided || w.code != 0 {
		return
	}
	w.code = code
	if !w.eligible() {
		// WriteHeader has no error to return; a connection that failed
		// here fails the handler's next Write too.
		_ = w.decide(false)
	}
}

// eligible reports whether the response, as far as its header says, may
// be compressed.
func (w *gzipWriter) eligible() bool {
	h := w.rw.Header()
	if w.code < 200 || w.code == http.StatusNoContent || w.code == http.StatusPartialContent || w.code == http.StatusNotModified {
		return false
	}
	if h.Get(echo.HeaderContentEncoding) != "" {
		return false
	}
	if n, err := strconv.Atoi(h.Get(echo.HeaderContentLength)); err == nil && n < gzipMinLength {
		return false
	}
	mt, _, err := mime.ParseMediaType(h.Get(echo.HeaderContentType))
	return err == nil && compressible[mt]
}

func (w *gzipWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.decided {
		if w.gz != nil {
			return w.gz.Write(b)
		}
		return w.rw.Write(b)
	}
	w.buf = append(w.buf, b...)
	if len(w.buf) >= gzipMinLength {
		if err := w.decide(true); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// Flush sends what is held: compressed if enough came to be worth it.
func (w *gzipWriter) Flush() {
	if !w.decided {
		if w.code == 0 {
			w.WriteHeader(http.StatusOK)
		}
		if !w.decided {
			_ = w.decide(len(w.buf) >= gzipMinLength)
		}
	}
	if w.gz != nil {
		_ = w.gz.Flush()
	}
	_ = http.NewResponseController(w.rw).Flush()
}

// decide writes the held status and bytes, through gzip or as they are.
func (w *gzipWriter) decide(compress bool) error {
	w.decided = true
	if compress {
		h := w.rw.Header()
		h.Del(echo.HeaderContentLength)
		h.Set(echo.HeaderContentEncoding, "gzip")
		w.gz = gzipWriters.Get().(*gzip.Writer)
		w.gz.Reset(w.rw)
	}
	w.rw.WriteHeader(w.code)
	if len(w.buf) == 0 {
		return nil
	}
	var err error
	if w.gz != nil {
		_, err = w.gz.Write(w.buf)
	} else {
		_, err = w.rw.Write(w.buf)
	}
	w.buf = nil
	return err
}

// finish writes what is still held and ends the gzip stream. A handler
// that wrote nothing (it returned an error for the error handler to
// render) leaves the response untouched.
func (w *gzipWriter) finish() {
	if !w.decided && w.code != 0 {
		_ = w.decide(false)
	}
	if w.gz != nil {
		_ = w.gz.Close()
		gzipWriters.Put(w.gz)
		w.gz = nil
	}
}
