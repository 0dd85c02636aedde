package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"countersign/internal/gqlshop"
	"countersign/store/dbtest"
)

// TestConformanceCommandPassesTheGraphQLShop: the GraphQL example file
// passes every check against the GraphQL shop, through the command's fault
// proxy with no fault_route, its effects counted by the file's own query.
func TestConformanceCommandPassesTheGraphQLShop(t *testing.T) {
	t.Parallel()
	shop := gqlshop.New("gql-token", time.Now)
	srv := httptest.NewServer(shop)
	t.Cleanup(srv.Close)
	getenv := func(k string) string {
		return map[string]string{"GQLSHOP_URL": srv.URL, "GQLSHOP_TOKEN": shop.Token()}[k]
	}
	var out bytes.Buffer
	code := runConformance(context.Background(), []string{"-system", "../../internal/httpadapter/testdata/example/graphql-shop.json",
		"-fixtures", "../../internal/httpadapter/testdata/fixtures/graphql-shop.json", "-database-url", dbtest.Server(t)}, &out, &out, getenv)
	if code != 0 || !strings.Contains(out.String(), "all 18 checks passed") {
		t.Fatalf("exit %d, want 0:\n%s", code, out.String())
	}
	if shop.Refunds("") == 0 {
		t.Error("the shop recorded no refund: the checks wrote nothing")
	}
}
