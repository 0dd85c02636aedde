package webtest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// apiExchange is one request to the JSON API and the answer it got, as the
// console's handler saw them.
type apiExchange struct {
	method, path string
	reqBody      []byte
	status       int
	resType      string
	resBody      []byte
}

// checkContract wraps a console's handler so that every exchange under
// /api/v1/ is recorded and, when the test ends (after the server it serves
// has closed), checked against the OpenAPI document: the status must be one
// the document gives for the route, the body must match that response's
// schema, and a body the server accepted (2xx) must match the request's
// schema. Every stack New builds is checked this way.
func checkContract(t *testing.T, h http.Handler) http.Handler {
	var mu sync.Mutex
	var seen []apiExchange
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if len(seen) == 0 {
			return
		}
		doc, err := loadContract(h)
		if err != nil {
			t.Errorf("OpenAPI document: %v", err)
			return
		}
		for _, e := range seen {
			if err := doc.check(e); err != nil {
				t.Errorf("%s %s answered %d, which the OpenAPI document does not allow: %v\nrequest: %.300s\nanswer: %.600s",
					e.method, e.path, e.status, err, e.reqBody, e.resBody)
			}
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/v1/") {
			h.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		tee := &teeWriter{ResponseWriter: w}
		h.ServeHTTP(tee, r)
		res := tee.buf.Bytes()
		if tee.Header().Get("Content-Encoding") == "gzip" {
			if zr, err := gzip.NewReader(bytes.NewReader(res)); err == nil {
				res, _ = io.ReadAll(zr)
			}
		}
		status := tee.status
		if status == 0 {
			status = http.StatusOK
		}
		mu.Lock()
		seen = append(seen, apiExchange{method: r.Method, path: r.URL.Path, reqBody: body, status: status,
			resType: tee.Header().Get("Content-Type"), resBody: res})
		mu.Unlock()
	})
}

// teeWriter copies what a handler writes.
type teeWriter struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
}

func (w *teeWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *teeWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.buf.Write(p)
	return w.ResponseWriter.Write(p)
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// contract is the OpenAPI document, with a compiler for schemas at any of
// its locations.
type contract struct {
	doc      map[string]any
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema
	ops      []contractOp
}

type contractOp struct {
	method string
	re     *regexp.Regexp
	// ptr is the operation's JSON pointer in the document.
	ptr string
	op  map[string]any
}

const contractURL = "https://countersign.test/api/v1/openapi.json"

var (
	contractOnce sync.Once
	contractDoc  *contract
	contractErr  error
)

// loadContract reads the OpenAPI document the console serves, once.
func loadContract(h http.Handler) (*contract, error) {
	contractOnce.Do(func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
		if rec.Code != http.StatusOK {
			contractErr = fmt.Errorf("GET /api/v1/openapi.json: %d", rec.Code)
			return
		}
		contractDoc, contractErr = newContract(rec.Body.Bytes())
	})
	return contractDoc, contractErr
}

func newContract(raw []byte) (*contract, error) {
	c := &contract{compiler: jsonschema.NewCompiler(), schemas: map[string]*jsonschema.Schema{}}
	if err := json.Unmarshal(raw, &c.doc); err != nil {
		return nil, err
	}
	closeObjects(c.doc)
	closed, _ := json.Marshal(c.doc)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(closed))
	if err != nil {
		return nil, err
	}
	c.compiler.DefaultDraft(jsonschema.Draft2020)
	c.compiler.AssertFormat()
	if err := c.compiler.AddResource(contractURL, inst); err != nil {
		return nil, err
	}
	paths, _ := c.doc["paths"].(map[string]any)
	for p, item := range paths {
		pattern := regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(p), `[^/]+`)
		re := regexp.MustCompile("^/api/v1" + pattern + "$")
		for method, op := range item.(map[string]any) {
			c.ops = append(c.ops, contractOp{method: strings.ToUpper(method), re: re,
				ptr: "/paths/" + escapePointer(p) + "/" + method, op: op.(map[string]any)})
		}
	}
	return c, nil
}

// closeObjects makes every object schema of the document that lists its
// properties and says nothing of others refuse them (additionalProperties:
// false), so that an answer carrying a field its schema does not list
// fails the check: a typed client generated from the document (its types
// have exactly the listed fields) would not know it. The document itself
// leaves answers open, so that a field added later breaks no client.
func closeObjects(v any) {
	switch v := v.(type) {
	case map[string]any:
		if _, open := v["additionalProperties"]; !open && v["properties"] != nil && isObjectType(v["type"]) {
			v["additionalProperties"] = false
		}
		for _, e := range v {
			closeObjects(e)
		}
	case []any:
		for _, e := range v {
			closeObjects(e)
		}
	}
}

// isObjectType reports whether a schema's type is "object" or a list of
// types holding it.
func isObjectType(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// schema compiles the schema at a JSON pointer of the document.
func (c *contract) schema(ptr string) (*jsonschema.Schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.schemas[ptr]; ok {
		return s, nil
	}
	s, err := c.compiler.Compile(contractURL + "#" + (&url.URL{Fragment: ptr}).EscapedFragment())
	if err != nil {
		return nil, err
	}
	c.schemas[ptr] = s
	return s, nil
}

// operation finds the documented operation of a request; false for a path
// or method the API does not have.
func (c *contract) operation(method, path string) (contractOp, bool) {
	for _, o := range c.ops {
		if o.method == method && o.re.MatchString(path) {
			return o, true
		}
	}
	return contractOp{}, false
}

// resolve follows a $ref to a response of components.
func (c *contract) resolve(ptr string, v map[string]any) (string, map[string]any) {
	ref, ok := v["$ref"].(string)
	if !ok {
		return ptr, v
	}
	ptr = strings.TrimPrefix(ref, "#")
	var cur any = c.doc
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		cur = cur.(map[string]any)[seg]
	}
	return ptr, cur.(map[string]any)
}

// check validates one exchange against the document.
func (c *contract) check(e apiExchange) error {
	o, ok := c.operation(e.method, e.path)
	if !ok {
		return nil
	}
	responses := o.op["responses"].(map[string]any)
	code := strconv.Itoa(e.status)
	res, ok := responses[code].(map[string]any)
	if !ok {
		codes := slices.Sorted(func(yield func(string) bool) {
			for k := range responses {
				if !yield(k) {
					return
				}
			}
		})
		return fmt.Errorf("status %d is not among the documented %v", e.status, codes)
	}
	ptr, res := c.resolve(o.ptr+"/responses/"+code, res)
	content, _ := res["content"].(map[string]any)
	if content["application/json"] == nil {
		if len(e.resBody) > 0 {
			return fmt.Errorf("the document gives no body, the server sent %d bytes", len(e.resBody))
		}
	} else {
		if !strings.HasPrefix(e.resType, "application/json") {
			return fmt.Errorf("Content-Type %q, documented application/json", e.resType)
		}
		if err := c.validate(ptr+"/content/application~1json/schema", e.resBody); err != nil {
			return fmt.Errorf("answer: %w", err)
		}
	}
	if e.status/100 == 2 && o.op["requestBody"] != nil {
		body := e.reqBody
		if len(bytes.TrimSpace(body)) == 0 {
			body = []byte("{}")
		}
		if err := c.validate(o.ptr+"/requestBody/content/application~1json/schema", body); err != nil {
			return fmt.Errorf("the server accepted a request the document refuses: %w", err)
		}
	}
	return nil
}

func (c *contract) validate(ptr string, body []byte) error {
	s, err := c.schema(ptr)
	if err != nil {
		return fmt.Errorf("schema at %s: %w", ptr, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.Validate(inst)
}
