package main

import "testing"

func TestParseConfig(t *testing.T) {
	t.Setenv("SHOP_ADDR", "127.0.0.1:9999")
	t.Setenv("SHOP_DATABASE_URL", "postgres://env/shop")
	t.Setenv("SHOP_SEED", "false")
	t.Setenv("SHOP_TOKEN", "shop_token_from_env")
	t.Setenv("SHOP_TEST_ENDPOINTS", "true")
	cfg, err := parseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (config{addr: "127.0.0.1:9999", databaseURL: "postgres://env/shop", seed: false, token: "shop_token_from_env", testEndpoints: true}); cfg != want {
		t.Errorf("from the environment: %+v, want %+v", cfg, want)
	}
	cfg, err = parseConfig([]string{"-addr", "127.0.0.1:0", "-database-url", "postgres://flag/shop", "-seed", "-token", "shop_token_from_flag", "-test-endpoints=false"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (config{addr: "127.0.0.1:0", databaseURL: "postgres://flag/shop", seed: true, token: "shop_token_from_flag"}); cfg != want {
		t.Errorf("flags over the environment: %+v, want %+v", cfg, want)
	}
}

func TestParseConfigRefuses(t *testing.T) {
	t.Setenv("SHOP_DATABASE_URL", "")
	if _, err := parseConfig(nil); err == nil {
		t.Error("no database URL accepted")
	}
	t.Setenv("SHOP_TOKEN", "")
	if _, err := parseConfig([]string{"-database-url", "postgres://x/y"}); err == nil {
		t.Error("no token accepted: the shop would take calls from anyone")
	}
	t.Setenv("SHOP_SEED", "perhaps")
	if _, err := parseConfig([]string{"-database-url", "postgres://x/y", "-token", "shop_token_long_enough"}); err == nil {
		t.Error("SHOP_SEED=perhaps accepted")
	}
}
