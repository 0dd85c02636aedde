package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"countersign/internal/demoshop/shoptest"
	"countersign/store/dbtest"
)

// conformanceRun runs `countersign conformance` on the description file
// of the demo shop, changed by edit, against a fresh shop, and returns its
// exit status and output.
func conformanceRun(t *testing.T, system string, edit func(string) string, fixtures string) (int, string) {
	t.Helper()
	shop := shoptest.Start(t, time.Now())
	if system != "shop" {
		raw, err := os.ReadFile(system)
		if err != nil {
			t.Fatal(err)
		}
		system = filepath.Join(t.TempDir(), "system.json")
		if err := os.WriteFile(system, []byte(edit(string(raw))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	getenv := func(k string) string {
		switch k {
		case "SHOP_URL":
			return shop.URL
		case "SHOP_TOKEN":
			return shop.Token()
		}
		return ""
	}
	var out, errs bytes.Buffer
	code := runConformance(context.Background(), []string{"-system", system, "-fixtures", fixtures,
		"-database-url", dbtest.Server(t)}, &out, &errs, getenv)
	return code, out.String() + errs.String()
}

const (
	shopHTTP         = "../../internal/httpadapter/testdata/shop-http.json"
	shopHTTPFixtures = "../../internal/httpadapter/testdata/fixtures/shop-http.json"
)

// TestConformanceCommandPassesTheShopsFile: every check passes for the
// demo shop's description file, and each is printed.
func TestConformanceCommandPassesTheShopsFile(t *testing.T) {
	t.Parallel()
	code, out := conformanceRun(t, shopHTTP, func(s string) string { return s }, shopHTTPFixtures)
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
	for _, check := range []string{"specs", "execute_once_per_key", "verify_by_read_back", "fault_5xx_is_unknown",
		"fault_reset_is_unknown", "fault_drop_after_commit_is_unknown_and_found", "every_argument_shows_in_the_quote",
		"path_arguments_stay_in_place"} {
		if !regexp.MustCompile(`(?m)^PASS ` + check + ` \(`).MatchString(out) {
			t.Errorf("the output has no PASS line for %s:\n%s", check, out)
		}
	}
	if !strings.Contains(out, "all 18 checks passed") {
		t.Errorf("no summary:\n%s", out)
	}
}

// TestConformanceCommandFailsBrokenFiles: a description whose verify
// reads the wrong field, and one whose idempotency key the system never
// sees, fail, naming the checks and why.
func TestConformanceCommandFailsBrokenFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		old, new string
		want     []string
	}{
		{"verify reads the wrong field", `"/amount_cents": "args.amount_cents"}`, `"/amount_refunded_cents": "args.amount_cents"}`,
			[]string{"FAIL verify_by_read_back", "want verified", "FAIL fault_drop_after_commit_is_unknown_and_found"}},
		{"the key goes in a header the system ignores", `"idempotency_header": "X-Request-Id"`, `"idempotency_header": "X-Correlation-Id"`,
			[]string{"FAIL execute_once_per_key", "recorded 0 effects under the key, want 1", "FAIL fault_drop_after_commit_is_unknown_and_found"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out := conformanceRun(t, shopHTTP, func(s string) string {
				if !strings.Contains(s, tc.old) {
					t.Fatalf("the file no longer holds %s", tc.old)
				}
				return strings.Replace(s, tc.old, tc.new, 1)
			}, shopHTTPFixtures)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the output does not say %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestConformanceCommandPassesTheShopAdapter: -system shop checks the
// built-in Go adapter of the shop the same way.
func TestConformanceCommandPassesTheShopAdapter(t *testing.T) {
	t.Parallel()
	code, out := conformanceRun(t, "shop", nil, "../../internal/shopadapter/testdata/conformance-fixtures.json")
	if code != 0 || !strings.Contains(out, "all 18 checks passed") {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
}

// TestConformanceUsageNeverPrintsTheShopToken: the usage a bad call prints
// names the flags but not the token the environment holds.
func TestConformanceUsageNeverPrintsTheShopToken(t *testing.T) {
	var out bytes.Buffer
	code := runConformance(context.Background(), []string{"-system", "x.json"}, &out, &out,
		func(k string) string { return map[string]string{"SHOP_TOKEN": "shop_secret_token"}[k] })
	if code != 2 || !strings.Contains(out.String(), "-fixtures") || strings.Contains(out.String(), "shop_secret_token") {
		t.Errorf("exit %d, usage:\n%s", code, out.String())
	}
}

// TestConformanceCommandSaysWhenNoFaultWasPlayed: a fault_route no write
// of the adapter takes fails the fault checks, saying so.
func TestConformanceCommandSaysWhenNoFaultWasPlayed(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(shopHTTPFixtures)
	if err != nil {
		t.Fatal(err)
	}
	fixtures := filepath.Join(t.TempDir(), "fixtures.json")
	if err := os.WriteFile(fixtures, []byte(strings.Replace(string(raw), `"POST /refunds"`, `"POST /nowhere"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := conformanceRun(t, shopHTTP, func(s string) string { return s }, fixtures)
	if code != 1 || !strings.Contains(out, "FAIL fault_reset_is_unknown") || !strings.Contains(out, `the fault proxy saw no write to fail as reset (fault_route "POST /nowhere")`) {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
