package conformance

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestGraphQLQueriesAreReads: the suite's transport and the fault proxy
// fail writes only; a GraphQL query is a read though it is a POST, a
// mutation (or anything not readable as GraphQL) is a write, and the body
// reaches the system whole.
func TestGraphQLQueriesAreReads(t *testing.T) {
	cases := []struct {
		method, body string
		read         bool
	}{
		{"GET", "", true},
		{"POST", `{"query": "query Order($id: ID!) { order(id: $id) { id } }", "variables": {"id": "1"}}`, true},
		{"POST", `{"query": "{ orders { id } }"}`, true},
		{"POST", `{"query": "fragment F on Order { id } query Q { order(id: 1) { ...F } }"}`, true},
		{"POST", `{"query": "mutation R($i: RefundInput!) { refundCreate(input: $i) { refund { id } } }"}`, false},
		{"POST", `{"query": "query A { a } mutation B { b }"}`, false},
		{"POST", `{"query": "query {"}`, false},
		{"POST", `{"amount_cents": 100}`, false},
		{"PATCH", `{"query": "{ orders { id } }"}`, false},
	}
	for _, tc := range cases {
		r, err := http.NewRequest(tc.method, "http://system.invalid/graphql", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if got := isRead(r); got != tc.read {
			t.Errorf("%s %s: read %t, want %t", tc.method, tc.body, got, tc.read)
		}
		if b, _ := io.ReadAll(r.Body); string(b) != tc.body {
			t.Errorf("%s %s: the body became %q", tc.method, tc.body, b)
		}
	}
}
