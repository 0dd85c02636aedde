package httpadapter_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"countersign/internal/gqlshop"
	"countersign/internal/httpadapter"
)

// introspectionQuery is the standard introspection query, cut to what a
// draft reads.
const introspectionQuery = `query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name }
    types {
      kind name
      fields(includeDeprecated: true) { name args { ...InputValue } type { ...TypeRef } }
      inputFields { ...InputValue }
      interfaces { name } enumValues(includeDeprecated: true) { name } possibleTypes { name }
    }
  }
}
fragment InputValue on __InputValue { name type { ...TypeRef } defaultValue }
fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }`

// introspect asks the GraphQL shop's server for its schema.
func introspect(t *testing.T) []byte {
	t.Helper()
	shop, srv := startGQLShop(t)
	body, _ := json.Marshal(map[string]any{"query": introspectionQuery})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+shop.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(raw, []byte(`"__schema"`)) {
		t.Fatalf("introspection: %d %s, %v", resp.StatusCode, raw, err)
	}
	return raw
}

// TestDraftFromGraphQLLoads: a draft from the GraphQL shop's SDL, and one
// from its introspection answer, load as they are, closed and with TODOs:
// an object kind for order(id:), a read tool per query field (the orders
// of a customer id and the customers by e-mail left out), and the refund
// mutation an action whose variables send the key, its answer and user
// errors where the payload has them.
func TestDraftFromGraphQLLoads(t *testing.T) {
	t.Parallel()
	for name, schema := range map[string][]byte{"SDL": []byte(gqlshop.Schema), "introspection": introspect(t)} {
		t.Run(name, func(t *testing.T) {
			d, err := httpadapter.DraftFromGraphQL(schema, httpadapter.DraftOptions{Name: "gql-shop", Write: []string{"refundCreate"}})
			if err != nil {
				t.Fatalf("DraftFromGraphQL: %v", err)
			}
			if strings.Join(d.Env, ",") != "GQL_SHOP_TOKEN,GQL_SHOP_URL" {
				t.Errorf("Env = %v", d.Env)
			}
			for _, w := range []string{`"protocol": "graphql"`, `"in_request": true`, `"amount_param": "amount_cents"`,
				`"data": "refundCreate.refund"`, `"user_errors": "refundCreate.userErrors"`, `'orderId': target.id`, `'idempotencyKey': key`,
				`"reference": "{response.id}"`, `"param": "after"`, `"items": "/nodes"`} {
				if !strings.Contains(string(d.File), w) {
					t.Errorf("the draft has no %s:\n%s", w, d.File)
				}
			}
			a, err := httpadapter.Load("draft.json", d.File, httpadapter.Config{Getenv: func(k string) string { return "http://secret.example" }})
			if err != nil {
				t.Fatalf("the draft does not load: %v\n%s", err, d.File)
			}
			var actions, reads []string
			for _, s := range a.Actions() {
				actions = append(actions, s.Name)
			}
			for _, s := range a.ReadTools() {
				reads = append(reads, s.Name)
			}
			slices.Sort(reads)
			if strings.Join(actions, ",") != "refund_create" || strings.Join(reads, ",") != "get_order,refunds" {
				t.Errorf("actions %v, read tools %v; want refund_create and get_order, refunds", actions, reads)
			}
			left, err := httpadapter.Unfinished("draft.json", d.File)
			if err != nil || len(left) == 0 {
				t.Errorf("Unfinished: %v, %v; want the TODOs", left, err)
			}
			notes := strings.Join(d.Notes, "\n")
			for _, w := range []string{"query customers takes email", "query orders takes customerId"} {
				if !strings.Contains(notes, w) {
					t.Errorf("no note %q in:\n%s", w, notes)
				}
			}
		})
	}
}

// TestDraftFromGraphQLRefusesWhatItCannotMake: an unknown mutation names
// the candidates, and a schema that does not parse says so.
func TestDraftFromGraphQLRefusesWhatItCannotMake(t *testing.T) {
	_, err := httpadapter.DraftFromGraphQL([]byte(gqlshop.Schema), httpadapter.DraftOptions{Write: []string{"refundDelete"}})
	if err == nil || !strings.Contains(err.Error(), "no mutation of that name (fix: use one of refundCreate)") {
		t.Errorf("unknown mutation: %v", err)
	}
	_, err = httpadapter.DraftFromGraphQL([]byte(gqlshop.Schema), httpadapter.DraftOptions{})
	if err == nil || !strings.Contains(err.Error(), "-write refundCreate") {
		t.Errorf("no -write: %v", err)
	}
	_, err = httpadapter.DraftFromGraphQL([]byte("type Query {"), httpadapter.DraftOptions{Write: []string{"x"}})
	if err == nil || !strings.Contains(err.Error(), "not a GraphQL schema") {
		t.Errorf("broken SDL: %v", err)
	}
}
