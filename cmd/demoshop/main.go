// Command demoshop runs the bundled demo shop: a fake business system with a
// frontend-shaped HTTP API, its own PostgreSQL schema, a ledger of effects and
// fault injection. See demoshop/README.md for the API.
//
// Flags (each with an environment fallback):
//
//	-addr          SHOP_ADDR          listen address (default 127.0.0.1:8090)
//	-database-url  SHOP_DATABASE_URL  PostgreSQL URL (required)
//	-seed          SHOP_SEED          load the demo data once (default true)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/demoshop"
)

type config struct {
	addr        string
	databaseURL string
	seed        bool
}

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg, err := parseConfig(os.Args[1:])
	if err != nil {
		log.Error("demoshop: bad configuration", "error", err.Error())
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("demoshop stopped", "error", err.Error())
		os.Exit(1)
	}
}

func parseConfig(args []string) (config, error) {
	seedDefault := true
	if v := os.Getenv("SHOP_SEED"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return config{}, fmt.Errorf("SHOP_SEED=%q: %w", v, err)
		}
		seedDefault = b
	}
	var cfg config
	fs := flag.NewFlagSet("demoshop", flag.ContinueOnError)
	fs.StringVar(&cfg.addr, "addr", envOr("SHOP_ADDR", "127.0.0.1:8090"), "listen address (SHOP_ADDR)")
	fs.StringVar(&cfg.databaseURL, "database-url", os.Getenv("SHOP_DATABASE_URL"), "PostgreSQL URL (SHOP_DATABASE_URL)")
	fs.BoolVar(&cfg.seed, "seed", seedDefault, "load the demo data once (SHOP_SEED)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if cfg.databaseURL == "" {
		return config{}, errors.New("-database-url or SHOP_DATABASE_URL is required")
	}
	return cfg, nil
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func run(ctx context.Context, cfg config, log *slog.Logger) error {
	pool, err := pgxpool.New(ctx, cfg.databaseURL)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer pool.Close()
	if err := demoshop.Migrate(ctx, pool); err != nil {
		return err
	}
	if cfg.seed {
		if err := demoshop.Seed(ctx, pool, time.Now()); err != nil {
			return err
		}
	}
	shop := demoshop.New(pool, demoshop.Options{Logger: log})
	running, err := demoshop.Start(ctx, shop, cfg.addr)
	if err != nil {
		return err
	}
	log.Info("demoshop listening", "url", running.URL, "seed", cfg.seed)
	<-ctx.Done()
	log.Info("demoshop shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return running.Close(shutdownCtx)
}
