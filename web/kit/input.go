package kit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/jsonkeys"
)

// Limits on what any request may carry, checked before a handler sees it.
// Each request type declares the limits of its own fields next to it.
const (
	// MaxAPIBody caps a JSON body of the API and the MCP server.
	MaxAPIBody = 256 << 10
	// maxFormBody caps a body of every other route (the console's forms),
	// checked before the CSRF check parses the form.
	maxFormBody = 64 << 10
	// MaxJSONDepth caps how deeply JSON objects and arrays nest, the body
	// itself counting as the first level.
	MaxJSONDepth = 32
	// MaxJSONKeys caps the keys of any one JSON object.
	MaxJSONKeys = 100
	// MaxParamBytes caps a path parameter, a query value and the headers
	// that reach the database (Idempotency-Key, Countersign-Task).
	MaxParamBytes = 2048
)

// LimitBody reads a request's body into memory up to the route's limit and
// answers 413 past it, so that nothing after it — the CSRF check parsing a
// form, a JSON decoder — reads an unbounded body.
func (s *Site) LimitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Body == nil || r.Body == http.NoBody {
			return next(c)
		}
		limit := int64(maxFormBody)
		if IsAPI(c) {
			limit = MaxAPIBody
		}
		if r.ContentLength > limit {
			return BodyTooLarge(limit)
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			return apperr.Wrap(err, apperr.BadRequest, "The request body could not be read.")
		}
		if int64(len(body)) > limit {
			return BodyTooLarge(limit)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		c.Set(ctxRawBody, body)
		return next(c)
	}
}

// ctxRawBody keeps the body LimitBody read, before any form parsing.
const ctxRawBody = "raw_body"

// RawBody is the request's body as it came, which a signature covers
// (Access.Signed); parsing the form does not consume it.
func RawBody(c echo.Context) []byte {
	b, _ := c.Get(ctxRawBody).([]byte)
	return b
}

// BodyTooLarge is the refusal of a body past limit bytes.
func BodyTooLarge(limit int64) error {
	return &apperr.Error{Kind: apperr.TooLarge, Code: "body_too_large",
		Message: fmt.Sprintf("The request body is larger than %d KiB, the most this address takes.", limit>>10),
		Hint:    "Send less: shorten the text or split the request."}
}

// RejectBadText refuses a request whose path parameters, query, checked
// headers or form fields hold a NUL byte, invalid UTF-8 or an oversized
// value, with a 400 naming the parameter. PostgreSQL cannot store either
// in text, and no handler should have to think about them.
func (s *Site) RejectBadText(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		values := c.ParamValues()
		for i, name := range c.ParamNames() {
			if i < len(values) {
				if err := checkText("path parameter", name, values[i], MaxParamBytes); err != nil {
					return err
				}
			}
		}
		if err := checkValues("query parameter", c.QueryParams(), MaxParamBytes); err != nil {
			return err
		}
		r := c.Request()
		for _, h := range s.CheckedHeaders {
			if err := checkText("header", h, r.Header.Get(h), MaxParamBytes); err != nil {
				return err
			}
		}
		if IsAPI(c) {
			return next(c)
		}
		ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		switch ct {
		case "application/x-www-form-urlencoded":
			if err := r.ParseForm(); err == nil {
				if err := checkValues("field", r.PostForm, maxFormBody); err != nil {
					return err
				}
			}
		case "multipart/form-data":
			if err := r.ParseMultipartForm(maxFormBody); err == nil {
				if err := checkValues("field", r.MultipartForm.Value, maxFormBody); err != nil {
					return err
				}
			}
		}
		return next(c)
	}
}

func checkValues(where string, values map[string][]string, limit int) error {
	for name, vs := range values {
		if err := checkText(where, name, name, limit); err != nil {
			return err
		}
		for _, v := range vs {
			if err := checkText(where, name, v, limit); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkText says what is wrong with value of the named input, if anything.
func checkText(where, name, value string, limit int) error {
	var problem string
	switch {
	case strings.IndexByte(value, 0) >= 0:
		problem = "must not contain NUL bytes"
	case !utf8.ValidString(value):
		problem = "must be valid UTF-8 text"
	case len(value) > limit:
		problem = fmt.Sprintf("must be at most %d bytes", limit)
	default:
		return nil
	}
	name = fieldName(name)
	return &apperr.Error{Kind: apperr.BadRequest, Code: "invalid_text",
		Message: fmt.Sprintf("The %s %s %s.", where, name, problem), Fields: map[string]string{name: problem},
		Hint: "Send text without NUL bytes, in UTF-8, within the limit."}
}

// fieldName makes an input's name safe to show and to key an error by:
// a name that is itself hostile or long is quoted in ASCII and cut short.
func fieldName(name string) string {
	if len(name) > 200 {
		name = name[:200]
	}
	if strings.IndexByte(name, 0) >= 0 || !utf8.ValidString(name) {
		return strconv.QuoteToASCII(name)
	}
	return name
}

// CheckJSONBody refuses a JSON body holding a NUL (\u0000) or invalid
// UTF-8 in any string, nested deeper than maxJSONDepth, with an object of
// more than maxJSONKeys keys, or with an object naming a key twice
// (json_duplicate_key, jsonkeys.Duplicate), with a 400 naming the field by
// its path ("facts.order.items[2]"). A body that is not JSON at all
// passes: the decoder that reads it says so. The body is left to be read
// again.
func CheckJSONBody(r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return apperr.Wrap(err, apperr.BadRequest, "The request body could not be read.")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err := checkJSON(body); err != nil {
		return err
	}
	return DuplicateKey(body)
}

// DuplicateKey refuses JSON whose objects name a key twice, at any depth,
// with a 400 (json_duplicate_key) naming the key by its path: the standard
// decoder keeps the last value, and a gateway or a log reading the first
// would see another amount than the one acted on.
func DuplicateKey(body []byte) error {
	d, found := jsonkeys.Duplicate(body)
	if !found {
		return nil
	}
	problem := "appears twice; send each key once"
	if d.Key != d.First {
		problem = "is the same key as " + strconv.QuoteToASCII(d.First) + " to a JSON decoder, which ignores case; send each key once"
	}
	return jsonProblem("json_duplicate_key", d.Path, problem)
}

// jsonFrame is one open object or array while walking a JSON document.
type jsonFrame struct {
	name       string // the path of the member that holds it; "" for the body
	object     bool
	keys       int
	index      int
	key        string // the current member's name
	expectName bool   // the next string token of an object is a name
}

// checkJSON walks body token by token, keeping the path to each value.
func checkJSON(body []byte) error {
	badUTF8 := int64(-1)
	if !utf8.Valid(body) {
		badUTF8 = int64(firstInvalidUTF8(body))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []*jsonFrame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil // not JSON: the decoder of the route answers it
		}
		var top *jsonFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		isName := false
		if s, ok := tok.(string); ok && top != nil && top.object && top.expectName {
			isName = true
			top.key, top.expectName = s, false
			top.keys++
			if top.keys > MaxJSONKeys {
				return jsonProblem("json_too_many_keys", jsonPath(stack, false), fmt.Sprintf("must have at most %d keys", MaxJSONKeys))
			}
		}
		// The path of the member name or value just read. NUL and invalid
		// UTF-8 can only be inside strings, so no other token is named.
		path := jsonPath(stack, true)
		if badUTF8 >= 0 && dec.InputOffset() > badUTF8 {
			return jsonProblem("invalid_text", path, "must be valid UTF-8 text")
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				name := path
				if len(stack) == 0 {
					name = ""
				}
				stack = append(stack, &jsonFrame{name: name, object: v == '{', expectName: v == '{'})
				if len(stack) > MaxJSONDepth {
					return jsonProblem("json_too_deep", path, fmt.Sprintf("must nest at most %d levels deep", MaxJSONDepth))
				}
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if strings.IndexByte(v, 0) >= 0 {
				return jsonProblem("invalid_text", path, "must not contain NUL (\\u0000)")
			}
			if isName {
				continue
			}
		}
		// A value ended: the container moves to its next member.
		if len(stack) > 0 {
			p := stack[len(stack)-1]
			if p.object {
				p.expectName = true
			} else {
				p.index++
			}
		}
	}
}

// jsonPath names the current position: "facts.order.items[2]"; with
// member set, it includes the member being read in the innermost frame.
func jsonPath(stack []*jsonFrame, member bool) string {
	if len(stack) == 0 {
		return "body"
	}
	top := stack[len(stack)-1]
	base := top.name
	if !member {
		if base == "" {
			return "body"
		}
		return base
	}
	var p string
	if top.object {
		p = fieldName(top.key)
		if base != "" {
			p = base + "." + p
		}
	} else {
		p = base + "[" + strconv.Itoa(top.index) + "]"
	}
	if len(p) > 200 {
		p = p[:200] + "…"
	}
	return p
}

func jsonProblem(code, field, problem string) error {
	return &apperr.Error{Kind: apperr.BadRequest, Code: code,
		Message: fmt.Sprintf("The field %s %s.", field, problem), Fields: map[string]string{field: problem},
		Hint: "Check the request against /api/v1/openapi.json."}
}

// firstInvalidUTF8 is the offset of the first byte that is not valid UTF-8.
func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// LimitedRequest is a request body whose fields have limits of their own,
// declared next to its type; decodeJSON answers 422 naming every field
// past its limit.
type LimitedRequest interface {
	OverLimits() FieldLimits
}

// FieldLimits collects, by field, what is past its limit and what the
// limit is.
type FieldLimits map[string]string

// Text checks a string's length in characters.
func (l FieldLimits) Text(field, v string, max int) {
	if utf8.RuneCountInString(v) > max {
		l[field] = fmt.Sprintf("must be at most %d characters", max)
	}
}

// List checks a List's length and each item's.
func (l FieldLimits) List(field string, vs []string, maxItems, maxLen int) {
	if len(vs) > maxItems {
		l[field] = fmt.Sprintf("must have at most %d items", maxItems)
		return
	}
	for i, v := range vs {
		l.Text(field+"["+strconv.Itoa(i)+"]", v, maxLen)
	}
}

// JSON checks the encoded size of a JSON value.
func (l FieldLimits) JSON(field string, v []byte, max int) {
	if len(v) > max {
		l[field] = fmt.Sprintf("must be at most %d bytes of JSON", max)
	}
}

// Err is the 422 naming every field past its limit, or nil.
func (l FieldLimits) Err() error {
	if len(l) == 0 {
		return nil
	}
	return &apperr.Error{Kind: apperr.Invalid, Code: "over_limit", Message: "Some fields are longer than this call takes.",
		Fields: l, Hint: "The limits are in /api/v1/openapi.json (maxLength, maxItems)."}
}
