package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/assistants"
	"countersign/internal/assistantsim"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/demo"
	"countersign/store"
)

// demoMode is what `make run` sets up on the embedded database: demo users,
// the demo assistant and its key, history for the metrics, work for the
// approval queue, pending confirmations for the demo customer, and one run
// of the scripted assistant. Nothing of it happens with a DATABASE_URL.
type demoMode struct {
	path    string
	creds   demo.Credentials
	manager *int64
}

// startDemo ensures the demo users, before policies are made (the demo
// manager owns them).
func startDemo(ctx context.Context, cfg config, acc *accounts.Service, shopURL string) (*demoMode, error) {
	d := &demoMode{path: filepath.Join(cfg.DataDir, "demo-credentials")}
	var err error
	if d.creds, err = demo.Load(d.path); err != nil {
		return nil, err
	}
	if err := demo.EnsureUsers(ctx, acc, &d.creds); err != nil {
		return nil, err
	}
	d.creds.ShopURL = shopURL
	if d.manager, err = demo.ManagerID(ctx, acc, d.creds); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *demoMode) policyOwner() *int64 {
	if d == nil {
		return nil
	}
	return d.manager
}

// seed fills the demo with data and prints the sign-ins, the assistant's
// key and the customer's confirmation links to stdout (not to the logs),
// keeping the credentials in the data dir for later runs.
func (d *demoMode) seed(ctx context.Context, cfg config, st *store.Store, cp *controlplane.Service, acc *accounts.Service,
	asst *assistants.Service, links *confirmation.Service, log *slog.Logger) error {
	if err := seedDemoHistory(ctx, st); err != nil {
		return err
	}
	seedDemoWork(ctx, cp, st, log)
	if err := seedDemoUnverified(ctx, cp, st, acc, d.creds.ShopURL); err != nil {
		log.Warn("demo refund with a lost acknowledgement not seeded", "error", err)
	}
	name, key, err := assistants.EnsureDemo(ctx, asst, d.creds.Assistant)
	if err != nil {
		return err
	}
	d.creds.Assistant = &demo.Assistant{Name: name, Key: key}
	if err := d.creds.Save(d.path); err != nil {
		return err
	}
	demoLinks, err := links.SeedDemo(ctx, demo.People[0].Email)
	if err != nil {
		return err
	}

	fmt.Printf("\nCountersign demo: open http://%s and sign in as one of these (kept in %s):\n\n", cfg.Addr, d.path)
	for _, u := range d.creds.Users {
		fmt.Printf("  %-9s %-34s %s\n", u.Role, u.Email, u.Password)
	}
	fmt.Printf("\n  Demo assistant %q, API key %s\n  (try: go run ./cmd/assistant-sim -url http://%s -key %s)\n", name, key, cfg.Addr, key)
	if d.creds.ShopURL != "" {
		fmt.Printf("  The demo shop runs at %s\n", d.creds.ShopURL)
	}
	if len(demoLinks) > 0 {
		fmt.Printf("\n  Confirmation links for %s. A link shows the request; to confirm, the customer proves who\n"+
			"  they are: sign in as the customer above, or ask for an e-mailed code. The demo does not send mail:\n"+
			"  codes are written as files to %s\n", demo.People[0].Email, cfg.mailDir())
		for _, l := range demoLinks {
			fmt.Printf("  %-28s http://%s%s\n", l.Action, cfg.Addr, l.Path)
		}
	}
	fmt.Println()
	return nil
}

// simulate plays the scripted assistant against this console once, on the
// first demo run, so the pages show realistic conversations. It waits for
// the server to answer first.
func (d *demoMode) simulate(ctx context.Context, cfg config, log *slog.Logger) {
	marker := filepath.Join(cfg.DataDir, "demo-simulated")
	if _, err := os.Stat(marker); err == nil || d.creds.Assistant == nil {
		return
	}
	base := "http://" + cfg.Addr
	if err := waitHealthy(ctx, base+"/healthz"); err != nil {
		return
	}
	tr, err := assistantsim.Run(ctx, base, d.creds.Assistant.Key, assistantsim.Options{Prefix: "demo-sim-"})
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
