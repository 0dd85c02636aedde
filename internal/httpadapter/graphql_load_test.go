package httpadapter_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"countersign/internal/httpadapter"
)

func gqlEnv(name string) string {
	switch name {
	case "GQLSHOP_URL":
		return "http://127.0.0.1:1"
	case "GQLSHOP_TOKEN":
		return "gql-token"
	}
	return ""
}

// TestGraphQLLoadErrorsNameTheLineAndTheFix breaks the GraphQL example one
// way at a time: each problem of an operation is found at load, naming the
// file, the line of the broken value and a fix.
func TestGraphQLLoadErrorsNameTheLineAndTheFix(t *testing.T) {
	const mutation = `"query": "mutation Refund($input: RefundInput!) {`
	const verify = `"query": "query Refunds($order: ID!) {`
	cases := []struct {
		name, old, new string
		want           []string
	}{
		{"a document that does not parse", mutation, `"query": "mutation Refund($input: RefundInput!) {{`,
			[]string{"/actions/0/request/graphql/query", "does not parse", "fix: write one operation"}},
		{"two operations", mutation, `"query": "query Other { orders { id } } mutation Refund($input: RefundInput!) {`,
			[]string{"/actions/0/request/graphql/query", "holds 2 operations; it must hold exactly one", "fix: keep one operation"}},
		{"a write that is a query", mutation, `"query": "query Refund($input: RefundInput!) {`,
			[]string{"/actions/0/request/graphql/query", "must be a mutation, and this is a query"}},
		{"a read that is a mutation", verify, `"query": "mutation Refunds($order: ID!) {`,
			[]string{"/actions/0/verify/graphql/query", "a read must be a query, and this is a mutation", "must never change the system"}},
		{"a variable the operation does not declare", `"variables": {"order": "target.id"}`, `"variables": {"order": "target.id", "limit": "5"}`,
			[]string{"/actions/0/verify/graphql/variables/limit", "declares no variable $limit", "fix: declare it"}},
		{"a required variable without a value", `"variables": {"order": "target.id"}`, `"variables": {}`,
			[]string{"/actions/0/verify/graphql/variables", "$order (ID!) is required and given no value", `fix: add "order"`}},
		{"an expression over an unknown argument", `"variables": {"order": "target.id"}`, `"variables": {"order": "args.order"}`,
			[]string{"/actions/0/verify/graphql/variables/order", "args.order"}},
		{"a cursor variable not declared", `"param": "after"`, `"param": "cursor"`,
			[]string{"/objects/order/paging/param", "declares no variable $cursor for the cursor", "fix: declare ($cursor: String)"}},
		{"page numbers for a GraphQL list", `"param": "after"}`, `"param": "after", "page_param": "page", "total_pages": "/pages"}`,
			[]string{"/objects/order/paging", "more than one way"}},
		{"page numbers alone for a GraphQL list", `"paging": {"has_more": "/pageInfo/hasNextPage", "next": "/pageInfo/endCursor", "param": "after"}`,
			`"paging": {"page_param": "page", "total_pages": "/pages"}`,
			[]string{"/objects/order/paging", "a GraphQL list pages by cursor only", `fix: write {"has_more": "/pageInfo/hasNextPage"`}},
		{"a user_errors on a read", `"data": "refunds"
      },
      "items": "/nodes",
      "fields"`, `"data": "refunds", "user_errors": "refunds.errors"
      },
      "items": "/nodes",
      "fields"`,
			[]string{"/actions/0/verify/graphql/user_errors", "applies to a mutation's payload"}},
		{"graphql in a plain HTTP file", `"protocol": "graphql",`, `"protocol": "http",`,
			[]string{"/principal/graphql", `protocol is not graphql`, `fix: add "protocol": "graphql"`}},
		{"a precondition on a mutation", `"result": {`, `"precondition": {"header": "If-Match", "refusal": {"status": [412]}}, "result": {`,
			[]string{"/actions/0/precondition", "not carried by a GraphQL mutation", "fix: pass the version in the mutation's variables"}},
		{"a variable sending an argument no quote line shows", `{"label": "Reason", "to": "{args.reason}"},`, ``,
			[]string{"/actions/0/request/graphql/variables/input", "sends args.reason to the system, but no quote line shows it"}},
	}
	// The error names the line of the first operation, not of old.
	at := map[string]string{"graphql in a plain HTTP file": `"graphql": {
      "query": "query Customer`,
		"a variable sending an argument no quote line shows": `"variables": {"input":`}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := os.ReadFile(gqlFile)
			if err != nil {
				t.Fatal(err)
			}
			i := bytes.Index(raw, []byte(tc.old))
			if i < 0 {
				t.Fatalf("the example file has no %s", tc.old)
			}
			line := bytes.Count(raw[:i], []byte("\n")) + 1
			if a := at[tc.name]; a != "" {
				line = bytes.Count(raw[:bytes.Index(raw, []byte(a))], []byte("\n")) + 1
			}
			raw = bytes.Replace(raw, []byte(tc.old), []byte(tc.new), 1)
			_, err = httpadapter.Load("graphql-shop.json", raw, httpadapter.Config{Getenv: gqlEnv})
			if err == nil {
				t.Fatal("the broken file loaded")
			}
			var fe *httpadapter.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FileError", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, fmt.Sprintf("graphql-shop.json:%d: ", line)) {
				t.Errorf("error %q does not name line %d", msg, line)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
}

// TestGraphQLVariablesAreTypedAgainstTheParameters: a variable whose value
// is an argument as it is must have a GraphQL type that holds it, and a
// required one needs a required argument.
func TestGraphQLVariablesAreTypedAgainstTheParameters(t *testing.T) {
	const query = `"query": "query Refunds($order: ID!) {`
	const vars = `"variables": {"order": "target.id"}`
	cases := []struct {
		name, decl, value string
		want              []string
	}{
		{"an integer in a String", "$amount: String", "args.amount_cents",
			[]string{"$amount is String, and args.amount_cents is an integer", "fix: declare $amount with a GraphQL type that holds an integer (Int)"}},
		{"a string in an Int", "$reason: Int", "args.reason",
			[]string{"$reason is Int, and args.reason is a string", "(String or ID)"}},
		{"a list for one value", "$reason: [String!]", "args.reason",
			[]string{"$reason is a list ([String!]), and args.reason is a single string"}},
		{"an integer in an Int", "$amount: Int!", "args.amount_cents", nil},
		{"a string in an enum or custom scalar", "$reason: RefundReason!", "args.reason", nil},
		{"a converted value", "$amount: String!", "string(args.amount_cents)", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := os.ReadFile(gqlFile)
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimPrefix(strings.SplitN(tc.decl, ":", 2)[0], "$")
			raw = bytes.Replace(raw, []byte(query), []byte(`"query": "query Refunds($order: ID!, `+tc.decl+`) {`), 1)
			raw = bytes.Replace(raw, []byte(vars), []byte(`"variables": {"order": "target.id", "`+name+`": "`+tc.value+`"}`), 1)
			_, err = httpadapter.Load("graphql-shop.json", raw, httpadapter.Config{Getenv: gqlEnv})
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("the file loaded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestGraphQLReadOfTheAccountNeedsThePrincipal: a read tool whose
// variables use account loads only with a principal lookup to find it.
func TestGraphQLReadOfTheAccountNeedsThePrincipal(t *testing.T) {
	raw, err := os.ReadFile(gqlFile)
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	s = s[:strings.Index(s, `"principal": {`)] + s[strings.Index(s, `"objects": {`):]
	s = strings.Replace(s, `"owner": "object.customerId == account.id",`, "", 1)
	s = strings.Replace(s, `"read_tools": [`, `"read_tools": [{"name": "my_orders", "title": "My orders", "description": "The customer's orders.",
    "graphql": {"query": "query Mine($c: ID!) { orders(customerId: $c) { nodes { id } } }", "variables": {"c": "account.id"}, "data": "orders"},
    "items": "/nodes", "fields": ["/id"]},`, 1)
	_, err = httpadapter.Load("graphql-shop.json", []byte(s), httpadapter.Config{Getenv: gqlEnv})
	if err == nil || !strings.Contains(err.Error(), "/read_tools/0/graphql/variables: the variables use account, but the file has no principal lookup") {
		t.Errorf("load: %v", err)
	}
}
