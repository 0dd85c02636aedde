package webtest

import (
	"net/http"
	"strings"
	"testing"
)

// TestContractRefusesAnAnswerMemberItsSchemaDoesNotList: an answer with a
// member its schema does not list fails the check, though the document
// leaves the object open (a typed client generated from it would not know
// the member); a free-form object (additionalProperties: true) and a
// listed member pass.
func TestContractRefusesAnAnswerMemberItsSchemaDoesNotList(t *testing.T) {
	t.Parallel()
	c, err := newContract([]byte(`{"openapi":"3.1.0","paths":{"/things/{id}":{"get":{"responses":{"200":{"description":"OK",
		"content":{"application/json":{"schema":{"type":"object","required":["id"],"properties":{"id":{"type":"string"},
		"nested":{"type":["object","null"],"properties":{"a":{"type":"integer"}}},
		"free":{"type":"object","additionalProperties":true}}}}}}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	answer := func(body string) error {
		return c.check(apiExchange{method: http.MethodGet, path: "/api/v1/things/x", status: 200, resType: "application/json", resBody: []byte(body)})
	}
	for _, ok := range []string{`{"id":"x"}`, `{"id":"x","nested":{"a":1},"free":{"any":[1,2]}}`, `{"id":"x","nested":null}`} {
		if err := answer(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{`{"id":"x","extra":1}`, `{"id":"x","nested":{"a":1,"b":2}}`} {
		if err := answer(bad); err == nil || !strings.Contains(err.Error(), "answer") {
			t.Errorf("%s passed the check (%v), want it refused for a member its schema does not list", bad, err)
		}
	}
}
