package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/pgcluster"
	"countersign/internal/shopadapter"
	"countersign/store"
)

// connectSystems builds the registry of business systems: the demo shop at
// SHOP_URL, or in demo mode one started in-process on a loopback port with
// its own database in the embedded cluster. stop closes what it started.
func connectSystems(ctx context.Context, cfg config, log *slog.Logger, cluster *pgcluster.Cluster, st *store.Store) (reg *adapter.Registry, shopURL string, stop func(), err error) {
	stop = func() {}
	shopURL = cfg.ShopURL
	if shopURL == "" && cluster != nil {
		var closeShop func()
		if shopURL, closeShop, err = startDemoShop(ctx, log, cluster); err != nil {
			return nil, "", stop, err
		}
		stop = closeShop
	}
	reg = adapter.NewRegistry()
	ledger := adapter.NewLedger(st, time.Now)
	if shopURL != "" {
		reg.Connect(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: shopURL, Ledger: ledger, Now: time.Now}))
		log.Info("system connected", "system", "shop", "url", shopURL)
	}
	// A described system may name SHOP_URL for its base URL; in demo mode the
	// shop started here is the one it means.
	getenv := func(k string) string {
		if v := os.Getenv(k); v != "" || k != "SHOP_URL" {
			return v
		}
		return shopURL
	}
	if err := connectDescribed(reg, cfg.SystemsDir, ledger, log, getenv); err != nil {
		stop()
		return nil, "", func() {}, err
	}
	if len(reg.Systems()) == 0 {
		log.Warn("no business system connected: set SHOP_URL to connect a shop, or SYSTEMS_DIR for systems described in files")
	}
	return reg, shopURL, stop, nil
}

func startDemoShop(ctx context.Context, log *slog.Logger, cluster *pgcluster.Cluster) (string, func(), error) {
	if err := createDatabase(ctx, cluster.URL("postgres"), "demoshop"); err != nil {
		return "", nil, err
	}
	pool, err := store.Open(ctx, cluster.URL("demoshop"), 30*time.Second)
	if err != nil {
		return "", nil, err
	}
	if err := demoshop.Migrate(ctx, pool); err != nil {
		pool.Close()
		return "", nil, fmt.Errorf("demo shop: %w", err)
	}
	if err := demoshop.Seed(ctx, pool, time.Now()); err != nil {
		pool.Close()
		return "", nil, fmt.Errorf("demo shop: %w", err)
	}
	shop := demoshop.New(pool, demoshop.Options{Logger: log.With("system", "demoshop")})
	running, err := demoshop.Start(ctx, shop, "127.0.0.1:0")
	if err != nil {
		pool.Close()
		return "", nil, err
	}
	return running.URL, func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = running.Close(closeCtx)
		pool.Close()
	}, nil
}
