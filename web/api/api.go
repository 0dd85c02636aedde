package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
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
	"countersign/internal/authserver"
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
		h.bearerChallenge(c, "", "")
		return &apperr.Error{Kind: apperr.Unauthenticated, Code: "missing_api_key",
			Message: "This call needs an API key.", Hint: "Send Authorization: Bearer csk_live_…; an admin issues keys on /admin/assistants."}
	}
	var a assistants.Assistant
	var limit string
	var err error
	if secret = strings.TrimSpace(secret); h.cfg.AuthServer != nil && strings.HasPrefix(secret, authserver.AccessPrefix) {
		// An OAuth access token (a hosted client a person connected).
		a, limit, err = h.tokenAssistant(c, secret)
	} else {
		var key assistants.Key
		a, key, err = h.cfg.Assistants.Authenticate(c.Request().Context(), secret)
		limit = key.ID
		if apperr.Is(err, apperr.Unauthenticated) {
			h.bearerChallenge(c, "invalid_token", "")
		}
	}
	if err != nil {
		return err
	}
	if err := h.limits.allow(limit, h.Now()); err != nil {
		return err
	}
	if err := kit.CheckJSONBody(c.Request()); err != nil {
		if c.Path() == mcpPath {
			// An MCP client reads only a JSON-RPC error as the call's answer.
			return h.mcpError(c, err)
		}
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
	if err := knownFields(raw, reflect.TypeOf(dst), ""); err != nil {
		return err
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

// knownFields refuses a member of raw that struct type t has no field for,
// and does the same in each member that is an object of a struct type of
// its own (would_propose), naming it by its path (would_propose.note).
func knownFields(raw map[string]json.RawMessage, t reflect.Type, prefix string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	fields := map[string]reflect.Type{}
	var allowed []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = f.Type
			allowed = append(allowed, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		ft, ok := fields[name]
		if !ok {
			return badRequest("unknown_field", "The body has a field this call does not take.",
				map[string]string{prefix + name: "unknown field; this takes: " + strings.Join(allowed, ", ")})
		}
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		var nested map[string]json.RawMessage
		if ft.Kind() == reflect.Struct && ft != reflect.TypeFor[time.Time]() && json.Unmarshal(raw[name], &nested) == nil {
			if err := knownFields(nested, ft, prefix+name+"."); err != nil {
				return err
			}
		}
	}
	return nil
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
