package demoshop

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// List is the envelope of every list the shop returns.
type List[T any] struct {
	Data    []T  `json:"data"`
	HasMore bool `json:"has_more"`
}

func newList[T any](items []T, limit int) List[T] {
	if items == nil {
		items = []T{}
	}
	if len(items) > limit {
		return List[T]{Data: items[:limit], HasMore: true}
	}
	return List[T]{Data: items}
}

const (
	defaultLimit = 25
	maxLimit     = 100
	maxBodyBytes = 1 << 20
)

// queryLimit reads ?limit=, defaulting to 25 and refusing anything outside 1..100.
func queryLimit(r *http.Request) (int, error) {
	raw := r.URL.Query().Get("limit")
	if raw == "" {
		return defaultLimit, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > maxLimit {
		return 0, errParam("limit", "parameter_invalid_integer", "Invalid limit: must be an integer between 1 and %d.", maxLimit)
	}
	return n, nil
}

// decodeBody reads a JSON object into dst, refusing members dst has no field
// for, the way a provider refuses unknown parameters. An empty body is
// allowed when emptyOK, for actions whose body is optional.
func decodeBody(r *http.Request, dst any, emptyOK bool) error {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
	if err != nil {
		return errParam("", "body_invalid", "The request body could not be read.")
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		if emptyOK {
			return nil
		}
		return errParam("", "parameter_missing", "This request needs a JSON body.")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return errParam("", "body_invalid", "The request body must be one JSON object.")
	}
	if name := unknownMember(obj, reflect.TypeOf(dst), ""); name != "" {
		return errParam(name, "parameter_unknown", "Received unknown parameter: %s.", name)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return errParam(typeErr.Field, "parameter_invalid", "Invalid value for %s: expected %s.", typeErr.Field, typeErr.Type)
		}
		return errParam("", "body_invalid", "The request body is not valid JSON.")
	}
	return nil
}

// unknownMember names the first member of obj (in name order) that struct
// type t has no json field for, looking into nested objects; "" when none.
// Names of nested members read like "shipping_address[street]".
func unknownMember(obj map[string]json.RawMessage, t reflect.Type, parent string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	fields := make(map[string]reflect.Type, t.NumField())
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "-" && f.IsExported() {
			fields[cmp.Or(name, f.Name)] = f.Type
		}
	}
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		name := key
		if parent != "" {
			name = parent + "[" + key + "]"
		}
		ft, ok := fields[key]
		if !ok {
			return name
		}
		var nested map[string]json.RawMessage
		if json.Unmarshal(obj[key], &nested) == nil {
			if n := unknownMember(nested, ft, name); n != "" {
				return n
			}
		}
	}
	return ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// The status line is gone already; a failed write means the client left.
	_ = enc.Encode(v)
}

// newID returns prefix followed by 16 random hex digits, e.g. "ord_3f2a9c0d1e4b5a67".
func newID(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

type ctxKey int

const (
	requestIDKey ctxKey = iota
	ignoreWritesKey
)

func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// withIgnoreWrites marks a request whose write must look successful but be
// rolled back (the ignore_writes fault).
func withIgnoreWrites(ctx context.Context) context.Context {
	return context.WithValue(ctx, ignoreWritesKey, true)
}

func ignoringWrites(ctx context.Context) bool {
	v, _ := ctx.Value(ignoreWritesKey).(bool)
	return v
}
