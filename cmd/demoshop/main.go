// Command demoshop runs the bundled demo shop: a fake business system with a
// frontend-shaped HTTP API, its own PostgreSQL schema, a ledger of effects and
// fault injection. See internal/demoshop/README.md for the API.
//
// Flags (each with an environment fallback):
//
//	-addr          SHOP_ADDR          listen address (default 127.0.0.1:8090)
//	-database-url  SHOP_DATABASE_URL  PostgreSQL URL (required)
//	-seed          SHOP_SEED          load the demo data once (default true)
//	-token         SHOP_TOKEN         the credential every call must carry as
//	                                  Authorization: Bearer <token> (required;
//	                                  give the console the same -shop-token)
//	-test-endpoints SHOP_TEST_ENDPOINTS serve GET /_ledger and /_faults, for
//	                                  tests, chaos and benchmarks (default false:
//	                                  they answer 404)
//
// With OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) set, every call is
// a server span exported over OTLP/HTTP as service OTEL_SERVICE_NAME
// (default demoshop), continuing the caller's traceparent.
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
	"countersign/internal/tracing"
)

type config struct {
	addr          string
	databaseURL   string
	seed          bool
	token         string
	testEndpoints bool
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
	seedDefault, err := envBool("SHOP_SEED", true)
	if err != nil {
		return config{}, err
	}
	testDefault, err := envBool("SHOP_TEST_ENDPOINTS", false)
	if err != nil {
		return config{}, err
	}
	var cfg config
	fs := flag.NewFlagSet("demoshop", flag.ContinueOnError)
	fs.StringVar(&cfg.addr, "addr", envOr("SHOP_ADDR", "127.0.0.1:8090"), "listen address (SHOP_ADDR)")
	fs.StringVar(&cfg.databaseURL, "database-url", os.Getenv("SHOP_DATABASE_URL"), "PostgreSQL URL (SHOP_DATABASE_URL)")
	fs.BoolVar(&cfg.seed, "seed", seedDefault, "load the demo data once (SHOP_SEED)")
	fs.StringVar(&cfg.token, "token", os.Getenv("SHOP_TOKEN"), "credential every call must carry as a bearer token (SHOP_TOKEN)")
	fs.BoolVar(&cfg.testEndpoints, "test-endpoints", testDefault, "serve GET /_ledger and /_faults, for tests (SHOP_TEST_ENDPOINTS)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if cfg.databaseURL == "" {
		return config{}, errors.New("-database-url or SHOP_DATABASE_URL is required")
	}
	if len(cfg.token) < 16 {
		return config{}, errors.New("-token or SHOP_TOKEN is required, at least 16 characters (e.g. openssl rand -hex 24); give the console the same value as -shop-token")
	}
	return cfg, nil
}

// envBool reads a boolean environment variable, fallback when unset.
func envBool(name string, fallback bool) (bool, error) {
	v := os.Getenv(name)
	if v == "" {
		return fallback, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: %w", name, v, err)
	}
	return b, nil
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
	opts := demoshop.Options{Logger: log, Token: cfg.token, TestEndpoints: cfg.testEndpoints}
	if tp, endpoint := tracing.ServiceFromEnv(tracing.ServiceName("demoshop")); tp != nil {
		log.Info("tracing calls", "otlp", endpoint)
		opts.Tracing = tp
		defer func() { _ = tp.Shutdown(context.WithoutCancel(ctx)) }()
	}
	shop := demoshop.New(pool, opts)
	running, err := demoshop.Start(ctx, shop, cfg.addr)
	if err != nil {
		return err
	}
	log.Info("demoshop listening", "url", running.URL, "seed", cfg.seed, "test_endpoints", cfg.testEndpoints)
	<-ctx.Done()
	log.Info("demoshop shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return running.Close(shutdownCtx)
}
