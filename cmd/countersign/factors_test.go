package main

import (
	"encoding/base64"
	"log/slog"
	"strings"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestFactorKeyConfigNamesTheFlagAndKeepsTheSecret(t *testing.T) {
	env := map[string]string{"FACTOR_KEY": base64.StdEncoding.EncodeToString([]byte("sixteen byte key"))}
	_, err := parseConfig(nil, func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), "-factor-key") || strings.Contains(err.Error(), env["FACTOR_KEY"]) {
		t.Fatalf("a 16-byte factor key: %v", err)
	}
	env["FACTOR_KEY"] = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	if _, err := parseConfig(nil, func(k string) string { return env[k] }); err != nil {
		t.Fatalf("a 32-byte factor key: %v", err)
	}
}

// TestFactorKeyMissingStopsAConsoleWhoseStaffUseFactors: without
// -factor-key second factors are off, which is fine until someone uses
// them; then the console refuses to start, naming the flag.
func TestFactorKeyMissingStopsAConsoleWhoseStaffUseFactors(t *testing.T) {
	ctx := t.Context()
	st := store.New(dbtest.New(t))
	acc := accounts.NewService(st, time.Now, accounts.DefaultThrottle)
	log := slog.New(slog.DiscardHandler)
	cfg := config{DatabaseURL: "postgres://db.example/countersign"}
	svc, err := cfg.factors(ctx, st, acc, nil, log)
	if err != nil || svc != nil {
		t.Fatalf("no key, nothing in use: %v, %v; want factors off", svc, err)
	}
	admin, err := acc.Create(ctx, accounts.NewUser{Email: "admin@example.test", Name: "Admin", Role: accounts.Admin, Password: "correct horse battery"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.FactorKey = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	svc, err = cfg.factors(ctx, st, acc, nil, log)
	if err != nil || svc == nil {
		t.Fatalf("with a key: %v, %v", svc, err)
	}
	if err := svc.SetRequired(ctx, admin, controlplane.Identification{Method: controlplane.IdentifiedPassword}, accounts.Agent, true, nil); err != nil {
		t.Fatal(err)
	}
	cfg.FactorKey = ""
	if _, err := cfg.factors(ctx, st, acc, nil, log); err == nil || !strings.Contains(err.Error(), "-factor-key") {
		t.Fatalf("no key while agents need a factor: %v, want an error naming -factor-key", err)
	}
}

// TestPasskeysFollowThePublicURL: the passkeys' relying party is
// -public-url's host; an IP address (the default listening address) cannot
// be one, so passkeys are then off and the log names -public-url.
func TestPasskeysFollowThePublicURL(t *testing.T) {
	st := store.New(dbtest.New(t))
	acc := accounts.NewService(st, time.Now, accounts.DefaultThrottle)
	var logged strings.Builder
	log := slog.New(slog.NewTextHandler(&logged, nil))
	cfg := config{DatabaseURL: "postgres://db.example/countersign", Addr: "127.0.0.1:8080",
		FactorKey: base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))}
	svc, err := cfg.factors(t.Context(), st, acc, nil, log)
	if err != nil || svc.PasskeysOn() || !strings.Contains(logged.String(), "-public-url") {
		t.Fatalf("at 127.0.0.1: %v, passkeys on %v, log %q; want them off and -public-url named", err, svc != nil && svc.PasskeysOn(), logged.String())
	}
	cfg.PublicURL = "https://console.example.com"
	if svc, err = cfg.factors(t.Context(), st, acc, nil, log); err != nil || !svc.PasskeysOn() {
		t.Fatalf("at https://console.example.com: %v, want passkeys on", err)
	}
}
