package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"countersign/internal/gqlshop"
)

// TestSystemsDraftFromGraphQLThenCheck: `systems draft -graphql` writes a
// file from a GraphQL schema that `systems check` loads and whose TODOs it
// names; the finished GraphQL example checks clean; -openapi and -graphql
// together are refused.
func TestSystemsDraftFromGraphQLThenCheck(t *testing.T) {
	dir := t.TempDir()
	sdl := filepath.Join(dir, "shop.graphql")
	if err := os.WriteFile(sdl, []byte(gqlshop.Schema), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "gql.json")
	var stdout, stderr bytes.Buffer
	if code := runSystems([]string{"draft", "-graphql", sdl, "-name", "gql-shop", "-out", out, "-write", "refundCreate"},
		&stdout, &stderr, nil); code != 0 {
		t.Fatalf("draft: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "set GQL_SHOP_TOKEN, GQL_SHOP_URL before loading it") ||
		!strings.Contains(stderr.String(), "note: query orders takes customerId from the model and is left out") {
		t.Errorf("draft's notes: %s", stderr.String())
	}
	env := func(k string) string {
		return map[string]string{"GQL_SHOP_TOKEN": "t", "GQL_SHOP_URL": "http://shop.example", "GQLSHOP_TOKEN": "t",
			"GQLSHOP_URL": "http://shop.example"}[k]
	}
	stdout.Reset()
	if code := runSystems([]string{"check", out}, &stdout, &stderr, env); code != 1 ||
		!strings.Contains(stdout.String(), "TODOs left") || strings.Contains(stdout.String(), "does not load") {
		t.Errorf("check of the draft: exit %d, want 1 with TODOs:\n%s", code, stdout.String())
	}
	stdout.Reset()
	if code := runSystems([]string{"check", "../../internal/httpadapter/testdata/example/graphql-shop.json"}, &stdout, &stderr, env); code != 0 {
		t.Errorf("check of the GraphQL example: exit %d: %s", code, stdout.String())
	}
	stderr.Reset()
	if code := runSystems([]string{"draft", "-graphql", sdl, "-openapi", sdl, "-write", "refundCreate"}, &stdout, &stderr, nil); code != 2 {
		t.Errorf("-graphql with -openapi: exit %d, want 2 (usage)", code)
	}
}
