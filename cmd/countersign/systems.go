package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
	"countersign/internal/tracing"
	"countersign/store"
	"countersign/store/pgcluster"
)

// connectSystems builds the registry of business systems: the demo shop at
// SHOP_URL with SHOP_TOKEN, or in demo mode one started in-process on a
// loopback port with its own database in the embedded cluster and a token
// of its own (returned as shop, nil otherwise; it serves no test
// endpoints). stop closes what it started.
func connectSystems(ctx context.Context, cfg config, log *slog.Logger, cluster *pgcluster.Cluster, st *store.Store) (reg *adapter.Registry, shopURL string, shop *demoshop.Shop, stop func(), err error) {
	stop = func() {}
	shopURL, token := cfg.ShopURL, cfg.ShopToken
	if shopURL == "" && cluster != nil {
		var closeShop func()
		if shop, shopURL, closeShop, err = startDemoShop(ctx, log, cluster); err != nil {
			return nil, "", nil, stop, err
		}
		stop, token = closeShop, shop.Token()
	}
	reg = adapter.NewRegistry()
	ledger := adapter.NewLedger(st, time.Now)
	if shopURL != "" {
		reg.Connect(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: shopURL, Token: token, Ledger: ledger, Now: time.Now,
			SettleAfter: cfg.ShopSettleAfter}))
		log.Info("system connected", "system", "shop", "url", shopURL)
	}
	// A described system may name SHOP_URL for its base URL and SHOP_TOKEN
	// for its credential; in demo mode the shop started here is the one
	// they mean.
	getenv := func(k string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		switch k {
		case "SHOP_URL":
			return shopURL
		case "SHOP_TOKEN":
			return token
		}
		return ""
	}
	if err := connectDescribed(reg, cfg.SystemsDir, ledger, log, getenv, cfg.AdapterTimeout); err != nil {
		stop()
		return nil, "", nil, func() {}, err
	}
	if len(reg.Systems()) == 0 {
		log.Warn("no business system connected: set SHOP_URL to connect a shop, or SYSTEMS_DIR for systems described in files")
	}
	return reg, shopURL, shop, stop, nil
}

func startDemoShop(ctx context.Context, log *slog.Logger, cluster *pgcluster.Cluster) (*demoshop.Shop, string, func(), error) {
	if err := createDatabase(ctx, cluster.URL("postgres"), "demoshop"); err != nil {
		return nil, "", nil, err
	}
	pool, err := store.Open(ctx, cluster.URL("demoshop"), 30*time.Second)
	if err != nil {
		return nil, "", nil, err
	}
	if err := demoshop.Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, "", nil, fmt.Errorf("demo shop: %w", err)
	}
	if err := demoshop.Seed(ctx, pool, time.Now()); err != nil {
		pool.Close()
		return nil, "", nil, fmt.Errorf("demo shop: %w", err)
	}
	// The shop is a service of its own in a trace, exported where the
	// console's spans go (OTEL_EXPORTER_OTLP_*), as demoshop.
	traces, _ := tracing.ServiceFromEnv("demoshop")
	opts := demoshop.Options{Logger: log.With("system", "demoshop")}
	if traces != nil {
		opts.Tracing = traces
	}
	shop := demoshop.New(pool, opts)
	running, err := demoshop.Start(ctx, shop, "127.0.0.1:0")
	if err != nil {
		pool.Close()
		return nil, "", nil, err
	}
	return shop, running.URL, func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = running.Close(closeCtx)
		if traces != nil {
			_ = traces.Shutdown(closeCtx)
		}
		pool.Close()
	}, nil
}
