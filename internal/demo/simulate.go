package demo

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"countersign/internal/assistantsim"
)

// Simulate plays the scripted assistant once, on the first demo run,
// against the console at consoleURL ("http://host:port") with the demo
// assistant's key, so the pages show realistic conversations. It waits for
// the console to answer /healthz first and marks the data dir when done.
// It runs after Seed, alongside the server; failures are logged.
func (d *Demo) Simulate(ctx context.Context, consoleURL string, log *slog.Logger) {
	marker := filepath.Join(d.dataDir, "demo-simulated")
	if _, err := os.Stat(marker); err == nil || d.creds.Assistant == nil {
		return
	}
	if err := waitHealthy(ctx, consoleURL+"/healthz"); err != nil {
		return
	}
	// The simulator plays the shop's site as well as the assistant: it
	// signs the assertion that vouches for the customer of each task.
	tr, err := assistantsim.Run(ctx, consoleURL, d.creds.Assistant.Key, assistantsim.Options{Prefix: "demo-sim-",
		Assistant: d.creds.Assistant.Name, SiteSecret: d.SiteSecrets()["shop"], SiteSystem: "shop"})
	if err != nil {
		log.Warn("demo simulator", "error", err)
		return
	}
	if err := os.WriteFile(marker, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o600); err != nil {
		log.Warn("demo simulator marker", "error", err)
	}
	log.Info("demo conversations played by the scripted assistant", "lines", len(tr))
}

func waitHealthy(ctx context.Context, url string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if res, err := http.Get(url); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), errors.New("console never became healthy"))
		case <-tick.C:
		}
	}
}
