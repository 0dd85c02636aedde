package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseConfigDefaultsAndEnvFallback(t *testing.T) {
	env := map[string]string{"ADDR": "0.0.0.0:9000", "SESSION_IDLE_TIMEOUT": "10m", "TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.0/24"}
	c, err := parseConfig([]string{"-log-format", "json"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "0.0.0.0:9000" || c.SessionIdle != 10*time.Minute || c.SessionAbsolute != 12*time.Hour || c.LogFormat != "json" {
		t.Errorf("got %+v", c)
	}
	if len(c.trusted) != 2 || !c.demo() {
		t.Errorf("trusted = %v, demo = %v", c.trusted, c.demo())
	}
	// A flag beats the environment.
	c, _ = parseConfig([]string{"-addr", "127.0.0.1:1"}, func(k string) string { return env[k] })
	if c.Addr != "127.0.0.1:1" {
		t.Errorf("flag did not override env: %s", c.Addr)
	}
}

func TestParseConfigNamesEachBadSetting(t *testing.T) {
	env := map[string]string{
		"ADDR": "nonsense", "DATABASE_URL": "mysql://x", "TLS_CERT_FILE": "c.pem", "SESSION_IDLE_TIMEOUT": "soon",
		"TRUSTED_PROXIES": "everyone", "SESSION_KEYS": "abcd", "LOG_FORMAT": "xml", "API_RATE_PER_MINUTE": "lots", "SYSTEMS_DIR": "/nonexistent-systems",
		"WEBHOOK_ALLOW_PRIVATE": "yes please",
	}
	_, err := parseConfig(nil, func(k string) string { return env[k] })
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"-addr", "-database-url", "-tls-cert", "-session-idle", "-trusted-proxies", "-session-keys", "-log-format", "-api-rate", "-systems-dir", "-webhook-allow-private"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "abcd") {
		t.Errorf("error repeats a secret: %v", err)
	}
}

func TestDecodeKeysKeepsOrderForRotation(t *testing.T) {
	newKey, oldKey := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	pairs, err := decodeKeys(newKey + "," + oldKey)
	if err != nil || len(pairs) != 4 {
		t.Fatalf("pairs = %d, %v", len(pairs), err)
	}
	if pairs[0][0] != 0xab || pairs[2][0] != 0xcd {
		t.Errorf("newest key must sign: got %x then %x", pairs[0][0], pairs[2][0])
	}
}

// TestMCPAllowedOrigins: the browser origins that may call /mcp are the
// configured ones and -public-url's; anything but an origin is refused.
func TestMCPAllowedOrigins(t *testing.T) {
	env := map[string]string{"MCP_ALLOWED_ORIGINS": "https://app.example.com, http://localhost:3000/", "PUBLIC_URL": "https://console.example.com/base"}
	c, err := parseConfig(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(c.allowedMCPOrigins(), " ")
	if want := "https://app.example.com http://localhost:3000 https://console.example.com"; got != want {
		t.Errorf("allowed origins %q, want %q", got, want)
	}
	for _, bad := range []string{"app.example.com", "https://app.example.com/path", "ftp://x"} {
		_, err := parseConfig([]string{"-mcp-allowed-origins", bad}, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), "-mcp-allowed-origins") {
			t.Errorf("-mcp-allowed-origins %q: %v, want an error naming it", bad, err)
		}
	}
}

// TestCustomerMailInterval: how often requests waiting for their customer
// are mailed is 5s unless CUSTOMER_MAIL_INTERVAL or the flag says, and a
// duration that is not positive is refused by name.
func TestCustomerMailInterval(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if c, err := parseConfig(nil, get); err != nil || c.CustomerMailEvery != 5*time.Second {
		t.Errorf("default: %v, %v; want 5s", c.CustomerMailEvery, err)
	}
	env["CUSTOMER_MAIL_INTERVAL"] = "1m"
	if c, err := parseConfig(nil, get); err != nil || c.CustomerMailEvery != time.Minute {
		t.Errorf("from the environment: %v, %v; want 1m", c.CustomerMailEvery, err)
	}
	if c, err := parseConfig([]string{"-customer-mail-interval", "2s"}, get); err != nil || c.CustomerMailEvery != 2*time.Second {
		t.Errorf("the flag: %v, %v; want 2s", c.CustomerMailEvery, err)
	}
	if _, err := parseConfig([]string{"-customer-mail-interval", "0s"}, get); err == nil || !strings.Contains(err.Error(), "-customer-mail-interval") {
		t.Errorf("0s: %v; want the flag named", err)
	}
}
