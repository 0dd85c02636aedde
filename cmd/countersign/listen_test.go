package main

import (
	"bytes"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAHeldAddressStopsTheStartFirst: a console whose -addr another
// process holds stops with the address's error before it starts a
// database or a demo, and never says it is listening. It used to start
// the embedded cluster, seed the demo, log "console listening" and only
// then fail to bind, while a stale console kept answering on the port.
func TestAHeldAddressStopsTheStartFirst(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	data := filepath.Join(t.TempDir(), "data")
	cfg, err := parseConfig([]string{"-addr", held.Addr().String(), "-data-dir", data}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	err = run(t.Context(), cfg, slog.New(slog.NewTextHandler(&logged, nil)))
	if err == nil || !strings.Contains(err.Error(), "-addr "+held.Addr().String()) {
		t.Fatalf("run on a held address: %v; want the address's error naming -addr", err)
	}
	if strings.Contains(logged.String(), "console listening") {
		t.Errorf("the log says the console is listening:\n%s", logged.String())
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the data dir was made (%v): the start went on past a held address", err)
	}
}
