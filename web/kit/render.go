package kit

import (
	"bytes"
	"net/http"
	"strings"
	"sync"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// Render writes a templ component through a buffer, so that a failed
// render becomes an error page instead of half a page.
func Render(c echo.Context, status int, comp templ.Component) error {
	buf := renderBuffers.Get().(*bytes.Buffer)
	defer func() {
		// A page's buffer is kept for the next page unless it grew far
		// past a page's size.
		if buf.Cap() <= 1<<20 {
			buf.Reset()
			renderBuffers.Put(buf)
		}
	}()
	if err := comp.Render(c.Request().Context(), buf); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.HTMLBlob(status, buf.Bytes())
}

// renderBuffers hold rendered pages until they are written: one buffer
// per request in flight instead of a new one grown page after page.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// SeeOther redirects after a successful form post.
func SeeOther(c echo.Context, to string) error { return c.Redirect(http.StatusSeeOther, to) }

// SetFlash stores a message for the next page this session sees.
func SetFlash(c echo.Context, text string, bad bool) {
	sess := Session(c)
	if bad {
		text = "!" + text
	}
	sess.Values[keyFlash] = text
	MarkDirty(sess)
	_ = sess.Save(c.Request(), c.Response())
}

// PopFlash takes the message SetFlash stored, if any; bad says it reports
// a failure.
func PopFlash(c echo.Context) (text string, bad bool) {
	sess := Session(c)
	text, _ = sess.Values[keyFlash].(string)
	if text == "" {
		return "", false
	}
	delete(sess.Values, keyFlash)
	MarkDirty(sess)
	_ = sess.Save(c.Request(), c.Response())
	if rest, ok := strings.CutPrefix(text, "!"); ok {
		return rest, true
	}
	return text, false
}
