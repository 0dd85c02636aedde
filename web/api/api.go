package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/web/kit"
)

// ctxAssistant is the echo.Context key of the authenticated assistant.
const ctxAssistant = "assistant"

// assistantKey is the request-context key of the authenticated assistant,
// read by the MCP server.
type assistantKey struct{}

// defaultAPIRatePerMinute is the per-key request rate when Config leaves
// RatePerMinute at zero.
const defaultAPIRatePerMinute = 120

// Authorize is the middleware of every bearer route: it authenticates the
// API key and applies the key's rate limit. Cookie sessions are not loaded
// on these paths, so a signed-in browser without a key gets 401 like anyone
// else.
func (h *Handler) Authorize(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error { return h.authorizeBearer(c, next) }
}

func (h *Handler) authorizeBearer(c echo.Context, next echo.HandlerFunc) error {
	secret, ok := strings.CutPrefix(c.Request().Header.Get("Authorization"), "Bearer ")
	if !ok || h.cfg.Assistants == nil {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="countersign"`)
		return &apperr.Error{Kind: apperr.Unauthenticated, Code: "missing_api_key",
			Message: "This call needs an API key.", Hint: "Send Authorization: Bearer csk_live_…; an admin issues keys on /admin/assistants."}
	}
	a, key, err := h.cfg.Assistants.Authenticate(c.Request().Context(), strings.TrimSpace(secret))
	if err != nil {
		if apperr.Is(err, apperr.Unauthenticated) {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="countersign", error="invalid_token"`)
		}
		return err
	}
	if err := h.limits.allow(key.ID, h.Now()); err != nil {
		return err
	}
	if err := kit.CheckJSONBody(c.Request()); err != nil {
		return err
	}
	c.Set(ctxAssistant, a)
	c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), assistantKey{}, a)))
	return next(c)
}

// currentAssistant returns the assistant a bearer route authenticated.
func currentAssistant(c echo.Context) assistants.Assistant {
	a, _ := c.Get(ctxAssistant).(assistants.Assistant)
	return a
}

// keyLimits is the per-key token bucket of the API and the MCP server. It
// lives in this process: with several console instances behind a load
// balancer each allows the rate, so the effective limit is the rate times
// the number of instances.
type keyLimits struct {
	mu       sync.Mutex
	perMin   int
	limiters map[string]*rate.Limiter
}

func newKeyLimits(perMinute int) *keyLimits {
	if perMinute <= 0 {
		perMinute = defaultAPIRatePerMinute
	}
	return &keyLimits{perMin: perMinute, limiters: map[string]*rate.Limiter{}}
}

// allow takes one token from the key's bucket or says how long to wait.
func (k *keyLimits) allow(keyID string, now time.Time) error {
	k.mu.Lock()
	lim, ok := k.limiters[keyID]
	if !ok {
		lim = rate.NewLimiter(rate.Limit(float64(k.perMin)/60), k.perMin)
		k.limiters[keyID] = lim
	}
	k.mu.Unlock()
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return &apperr.Error{Kind: apperr.LimitReached, Code: "rate_limited", Retryable: true,
			RetryAfterSeconds: int(math.Ceil(d.Seconds())),
			Message:           "Too many requests with this API key.",
			Hint:              "Wait for the number of seconds in Retry-After, then repeat the request."}
	}
	return nil
}

// decodeJSON reads a JSON object body into dst strictly: a body that is
// not a JSON object, or a field dst does not have, is a 400 naming the
// field; a value of the wrong type, or one past a limit dst declares
// (limitedRequest), is a 422 naming the field. Bodies of bearer routes were
// already checked for size, depth, key counts, NUL and UTF-8
// (checkJSONBody).
func decodeJSON(c echo.Context, dst any) error {
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, kit.MaxAPIBody+1))
	if err != nil {
		return apperr.Wrap(err, apperr.Invalid, "The request body could not be read.")
	}
	if len(body) > kit.MaxAPIBody {
		return kit.BodyTooLarge(kit.MaxAPIBody)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return badRequest("malformed_json", "The body must be one JSON object.", nil)
	}
	allowed := jsonFields(dst)
	for name := range raw {
		if !slices.Contains(allowed, name) {
			return badRequest("unknown_field", "The body has a field this call does not take.",
				map[string]string{name: "unknown field; this call takes: " + strings.Join(allowed, ", ")})
		}
	}
	if err := json.Unmarshal(body, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return apperr.InvalidFields(map[string]string{te.Field: "must be a JSON " + jsonType(te.Type)})
		}
		var pe *time.ParseError
		if errors.As(err, &pe) {
			return apperr.InvalidFields(map[string]string{timeField(raw): "must be a time in RFC 3339 form, e.g. 2026-04-30T12:00:00Z"})
		}
		return badRequest("malformed_json", "The body must be one JSON object.", nil)
	}
	if l, ok := dst.(kit.LimitedRequest); ok {
		return l.OverLimits().Err()
	}
	return nil
}

// badRequest is a 400: the request could not be understood at all.
func badRequest(code, message string, fields map[string]string) error {
	return &apperr.Error{Kind: apperr.BadRequest, Code: code, Message: message, Fields: fields,
		Hint: "Check the request against /api/v1/openapi.json."}
}

// jsonFields lists the JSON names of a struct's fields.
func jsonFields(dst any) []string {
	t := reflect.TypeOf(dst)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return "value of another type"
}

// timeField guesses which field held an unparseable time: the one whose
// name ends in _at.
func timeField(raw map[string]json.RawMessage) string {
	for name := range raw {
		if strings.HasSuffix(name, "_at") {
			return name
		}
	}
	return ""
}
