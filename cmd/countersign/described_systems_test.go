package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"countersign/internal/adapter"
)

func writeSystem(t *testing.T, dir, name string, edit func(string) string) {
	t.Helper()
	raw, err := os.ReadFile("../../internal/httpadapter/testdata/shop-http.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(edit(string(raw))), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestConnectDescribedSystems: a valid file is connected and listed; a
// broken one, or one whose variable is unset, stops the start with the
// file, the line and the fix.
func TestConnectDescribedSystems(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	env := func(k string) string {
		switch k {
		case "SHOP_URL":
			return "http://127.0.0.1:1"
		case "SHOP_TOKEN":
			return "shop_test_token"
		}
		return ""
	}
	same := func(s string) string { return s }

	dir := t.TempDir()
	writeSystem(t, dir, "shop-http.json", same)
	reg := adapter.NewRegistry()
	if err := connectDescribed(reg, dir, nil, log, env, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	if s, err := reg.System("shop-http"); err != nil || len(s.Actions()) != 4 {
		t.Errorf("shop-http not connected with its actions: %v", err)
	}

	// The line the file names base_url_env on, counted from the file itself.
	raw, err := os.ReadFile("../../internal/httpadapter/testdata/shop-http.json")
	if err != nil {
		t.Fatal(err)
	}
	envLine := strings.Count(string(raw[:strings.Index(string(raw), `"base_url_env"`)]), "\n") + 1
	cases := []struct {
		name string
		edit func(string) string
		env  func(string) string
		want []string
	}{
		{"invalid", func(s string) string { return strings.Replace(s, `"risk": "irreversible"`, `"risk": "maybe"`, 1) }, env,
			[]string{"bad.json:", "/actions/0/risk", "fix: reversible or irreversible"}},
		{"unset base URL", same, func(string) string { return "" },
			[]string{fmt.Sprintf("bad.json:%d: /base_url_env", envLine), "SHOP_URL is not set"}},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		writeSystem(t, dir, "bad.json", tc.edit)
		err := connectDescribed(adapter.NewRegistry(), dir, nil, log, tc.env, 15*time.Second)
		if err == nil {
			t.Fatalf("%s: the console would start", tc.name)
		}
		for _, w := range append(tc.want, "-systems-dir") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", tc.name, err, w)
			}
		}
	}

	dir = t.TempDir()
	writeSystem(t, dir, "shop.json", func(s string) string { return strings.Replace(s, `"name": "shop-http"`, `"name": "shop"`, 1) })
	reg = adapter.NewRegistry()
	reg.Connect(stubSystem{adapter.System(nil)})
	if err := connectDescribed(reg, dir, nil, log, env, 15*time.Second); err == nil || !strings.Contains(err.Error(), `"shop" is already connected`) {
		t.Errorf("a second system named shop: %v", err)
	}
}

// TestASettleTimeNoLongerThanACallStopsTheStart: an authoritative lookup
// settles a call as not applied when nothing is found under its key
// settle_after after it; with -adapter-timeout as long, a call still on its
// way would be settled, so the console does not start (as with
// -shop-settle-after).
func TestASettleTimeNoLongerThanACallStopsTheStart(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	env := func(k string) string {
		return map[string]string{"SHOP_URL": "http://127.0.0.1:1", "SHOP_TOKEN": "shop_test_token"}[k]
	}
	dir := t.TempDir()
	writeSystem(t, dir, "shop-http.json", func(s string) string {
		return strings.Replace(s, `"effects": {`, `"effects": {"authoritative": true, "settle_after": "2m",`, 1)
	})
	err := connectDescribed(adapter.NewRegistry(), dir, nil, log, env, 2*time.Minute)
	if err == nil || !strings.Contains(err.Error(), "settle_after 2m0s is not longer than -adapter-timeout 2m0s") {
		t.Fatalf("a settle time as long as a call: %v", err)
	}
	if err := connectDescribed(adapter.NewRegistry(), dir, nil, log, env, time.Minute); err != nil {
		t.Fatalf("a settle time longer than a call: %v", err)
	}
}

type stubSystem struct{ adapter.System }

func (stubSystem) Name() string { return "shop" }
