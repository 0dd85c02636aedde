package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDebugAddrConfig: the profiler is off by default, takes its address
// from DEBUG_ADDR or -debug-addr, and refuses a bad address or the
// console's own.
func TestDebugAddrConfig(t *testing.T) {
	c, err := parseConfig(nil, func(string) string { return "" })
	if err != nil || c.DebugAddr != "" {
		t.Fatalf("default: %q, %v", c.DebugAddr, err)
	}
	env := map[string]string{"DEBUG_ADDR": "127.0.0.1:6060"}
	c, err = parseConfig(nil, func(k string) string { return env[k] })
	if err != nil || c.DebugAddr != "127.0.0.1:6060" {
		t.Fatalf("from env: %q, %v", c.DebugAddr, err)
	}
	c, err = parseConfig([]string{"-debug-addr", "[::1]:6061"}, func(k string) string { return env[k] })
	if err != nil || c.DebugAddr != "[::1]:6061" {
		t.Fatalf("flag over env: %q, %v", c.DebugAddr, err)
	}
	for _, bad := range [][]string{{"-debug-addr", "everywhere"}, {"-debug-addr", "127.0.0.1:8080"}} {
		if _, err := parseConfig(bad, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "-debug-addr") {
			t.Errorf("%v: error does not name -debug-addr: %v", bad, err)
		}
	}
	for addr, want := range map[string]bool{"127.0.0.1:6060": true, "localhost:6060": true, "[::1]:6060": true, "0.0.0.0:6060": false, ":6060": false} {
		if loopback(addr) != want {
			t.Errorf("loopback(%q) = %v, want %v", addr, !want, want)
		}
	}
}

// TestDebugHandlerServesPprof: the debug listener's handler serves the
// profile index, a goroutine profile and nothing else.
func TestDebugHandlerServesPprof(t *testing.T) {
	srv := httptest.NewServer(debugHandler())
	defer srv.Close()
	for path, want := range map[string]int{"/debug/pprof/": 200, "/debug/pprof/goroutine?debug=1": 200, "/": 404, "/queue": 404} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
}
