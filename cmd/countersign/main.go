// Command countersign runs the console. With no DATABASE_URL it starts a
// private PostgreSQL cluster under the data dir and seeds demo users (demo
// mode); with one it uses that database and seeds nothing.
//
//	countersign [flags]                          serve the console
//	countersign create-user -email E -name N -role R   add a user (password on stdin)
//	countersign conformance -system FILE -fixtures FILE  check a connected system (internal/httpadapter/README.md)
//	countersign systems draft -openapi FILE              draft a description file from an OpenAPI document
//	countersign systems check FILE                       load a description file and list its TODOs
//	countersign locales check DIR                        check catalogue files that add or override languages
//	countersign locales template [-lang TAG] [-console]  write a catalogue to start a translation from
//	countersign receipts verify -jwks FILE|URL [-audit-key K] RECEIPT   check a signed receipt offline (docs/api.md)
//	countersign audit keygen|sign|export|verify          the verifiable trail (internal/audit/README.md)
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/term"

	"countersign/internal/accounts"
	"countersign/internal/assistants"
	"countersign/internal/authserver"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/custkeys"
	"countersign/internal/demo"
	"countersign/internal/handoffs"
	"countersign/internal/lists"
	"countersign/internal/metrics"
	"countersign/internal/tracing"
	"countersign/internal/webhooks"
	"countersign/store"
	"countersign/store/pgcluster"
	"countersign/web"
	"countersign/web/kit"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "create-user" {
		os.Exit(createUser(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "systems" {
		os.Exit(runSystems(os.Args[2:], os.Stdout, os.Stderr, os.Getenv))
	}
	if len(os.Args) > 1 && os.Args[1] == "locales" {
		os.Exit(runLocales(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "receipts" {
		os.Exit(runReceipts(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "audit" {
		os.Exit(runAudit(context.Background(), os.Args[2:], os.Stdout, os.Stderr, os.Getenv))
	}
	if len(os.Args) > 1 && os.Args[1] == "conformance" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := runConformance(ctx, os.Args[2:], os.Stdout, os.Stderr, os.Getenv)
		stop()
		os.Exit(code)
	}
	cfg, err := parseConfig(os.Args[1:], os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	log := newLogger(cfg.LogFormat)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("countersign stopped", "error", err)
		os.Exit(1)
	}
}

func newLogger(format string) *slog.Logger {
	if format == "json" || (format == "auto" && !term.IsTerminal(int(os.Stderr.Fd()))) {
		return slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}

func run(ctx context.Context, cfg config, log *slog.Logger) error {
	if err := cfg.installLocales(log); err != nil {
		return err
	}
	// The address first: a port another process holds stops the start
	// before a database, a demo or a worker is started, and "console
	// listening" is said only of an address the console holds.
	// Connections made before the server runs wait in the backlog.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("-addr %s: %w", cfg.Addr, err)
	}
	defer ln.Close()
	pool, direct, cluster, cleanup, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	// The migration lock is a session's: through a transaction pooler it
	// takes the direct connection (direct is pool without one).
	applied, err := store.Migrate(ctx, direct)
	if err != nil {
		return err
	}
	log.Info("database ready", "migrations_applied", applied)

	st := store.New(pool, direct)
	acc := accounts.NewService(st, time.Now, accounts.DefaultThrottle)
	keys, err := cfg.sessionKeys(log)
	if err != nil {
		return err
	}
	sessions := kit.NewSessionStore(st, kit.SessionConfig{KeyPairs: keys, Secure: cfg.SecureCookies || cfg.tls(),
		Idle: cfg.SessionIdle, Absolute: cfg.SessionAbsolute})

	factorSvc, err := cfg.factors(ctx, st, acc, keys[0], log)
	if err != nil {
		return err
	}

	// OpenTelemetry: each write's stages as one trace, exported over OTLP
	// when the standard OTEL_EXPORTER_OTLP_* variables name a collector;
	// before the systems are connected, so the demo's own proposals are
	// traced like any other.
	if endpoint, stopTracing := tracing.FromEnv(); endpoint != "" {
		log.Info("tracing writes", "otlp", endpoint)
		defer func() { _ = stopTracing(context.WithoutCancel(ctx)) }()
	}
	registry, shopURL, demoShop, stopShop, err := connectSystems(ctx, cfg, log, cluster, st)
	if err != nil {
		return err
	}
	defer stopShop()
	cp := controlplane.New(st, registry, controlplane.Config{CallTimeout: cfg.AdapterTimeout, LeaseMargin: cfg.LeaseMargin,
		ReconcileFirst: cfg.ReconcileFirst}, time.Now, log)

	ls := lists.New(st, time.Now)
	asst := assistants.New(st, cp, registry, time.Now)
	confirmations := cfg.confirmationConfig(keys, log)
	links := confirmation.New(st, cp, registry, confirmations, time.Now)
	var dm *demo.Demo
	if cfg.demo() {
		// Before the policies: the demo manager owns them.
		if dm, err = demo.Start(ctx, acc, cfg.DataDir, shopURL); err != nil {
			return err
		}
	}
	asst.SetSiteSecrets(cfg.siteSecrets(dm.SiteSecrets()))
	if err := cp.EnsurePolicies(ctx, dm.PolicyOwner()); err != nil {
		return err
	}
	if dm != nil {
		// Before the dispatcher starts: the demo's lost acknowledgement is
		// sent by the seeding itself.
		services := demo.Services{Control: cp, Registry: registry, Lists: ls, Assistants: asst, Confirmations: links, History: st}
		if demoShop != nil {
			services.Shop = demoShop
		}
		printout, err := dm.Seed(ctx, services, log)
		if err != nil {
			return err
		}
		// The seeded confirmations' mails are in the mail folder before
		// the printout says so (the loop below would send them too).
		if _, err := links.MailWaiting(ctx); err != nil {
			return err
		}
		printout.Write(os.Stdout, cfg.Addr, cfg.mailDir())
	}
	if cfg.DebugAddr != "" {
		go serveDebug(ctx, log, cfg.DebugAddr)
	}
	go cp.RunDispatcher(ctx, cfg.DispatchEvery)
	go metrics.RunRefresher(ctx, st, cfg.MetricsRefresh, log)
	go asst.RunEventWindowPruner(ctx, 10*time.Minute, log)
	var telemetry *kit.Telemetry
	if cfg.TelemetryAddr != "" {
		telemetry = kit.NewTelemetry(st)
		go serveTelemetry(ctx, log, cfg.TelemetryAddr, telemetry.PrometheusHandler(cfg.TelemetryToken))
	}

	// Demo mode's assistant listens on loopback; anywhere else an endpoint
	// must be a public https address (internal/webhooks Config).
	hooks := webhooks.Config{AllowPrivate: cfg.demo() || cfg.WebhookAllowPrivate == "true", LegacySignature: cfg.WebhookLegacySignature == "true"}
	bot, err := cfg.startSlack(ctx, cp, st, acc, log, os.Stdout)
	if err != nil {
		return err
	}
	signer, err := cfg.receipts()
	if err != nil {
		return err
	}
	if cfg.ReceiptKey == "" && !cfg.demo() {
		log.Warn("receipts are signed with a key of this process's own: set -receipt-key so every instance, and every restart, signs with one key")
	}
	if cfg.OIDCDemo {
		if cfg, err = cfg.startDemoSSO(ctx, os.Stdout); err != nil {
			return err
		}
	}
	staffSSO, err := cfg.startSSO(ctx, st, log)
	if err != nil {
		return err
	}
	custKeys, err := cfg.customerPasskeys(st, registry, confirmations.Mail, log)
	if err != nil {
		return err
	}
	trail, err := cfg.startAudit(ctx, st, log, os.Stdout)
	if err != nil {
		return err
	}
	srv := web.New(web.Config{SSO: staffSSO, StaffPasswordsOff: !cfg.PasswordSignIn, Slack: bot, Receipts: signer, Database: st, Metrics: metrics.NewReports(st), Webhooks: webhooks.New(st, time.Now, hooks), Accounts: acc, Sessions: sessions, Logger: log, Registry: registry, Control: cp, Handoffs: handoffs.New(st, cp, registry, time.Now), Lists: ls,
		TrustedProxies: cfg.trusted, TLS: cfg.tls() || cfg.SecureCookies, MCPAllowedOrigins: cfg.allowedMCPOrigins(), PublicBase: cfg.publicBase(),
		Confirmations: links, Assistants: asst, Telemetry: telemetry, APIRatePerMinute: cfg.APIRate, Factors: factorSvc,
		CustomerPasskeys: custKeys, AuthServer: authserver.New(st, authserver.Config{}), Audit: trail})
	go sweep(ctx, log, sessions, acc, links, custKeys)
	go links.RunMailWaiting(ctx, cfg.CustomerMailEvery)
	go webhooks.NewWorker(st, srv.WebhookRender(cfg.publicBase()), hooks, nil, log).Run(ctx, cfg.WebhookEvery)
	if n := cfg.notifier(st, log); n.Enabled() {
		go n.Run(ctx, cfg.NotifyEvery)
	}
	if bot != nil {
		go bot.Run(ctx, cfg.SlackEvery)
	}
	log.Info("console listening", "url", "http://"+cfg.Addr)
	if dm != nil {
		go dm.Simulate(ctx, "http://"+cfg.Addr, log)
	}
	if err := srv.ServeOn(ctx, ln, cfg.ShutdownGrace, cfg.TLSCertFile, cfg.TLSKeyFile); err != nil {
		return err
	}
	log.Info("console stopped")
	return nil
}

// openDatabase connects to DATABASE_URL, or in demo mode starts the
// embedded cluster and creates the console's database in it. direct is the
// pool for what keeps a session (LISTEN, the migration lock): with
// DATABASE_DIRECT_URL a small pool of its own, beside a DATABASE_URL that
// goes through a transaction pooler; without, pool itself. cleanup closes
// the pools and stops the cluster.
func openDatabase(ctx context.Context, cfg config, log *slog.Logger) (pool, direct *pgxpool.Pool, _ *pgcluster.Cluster, _ func(), _ error) {
	if !cfg.demo() && cfg.DirectURL != "" {
		direct, err := store.Open(ctx, cfg.DirectURL, 30*time.Second, store.IdleInTransactionTimeout(cfg.IdleInTx), store.MaxConns(4))
		if err != nil {
			return nil, nil, nil, nil, err
		}
		pool, err := store.Open(ctx, cfg.DatabaseURL, 30*time.Second, store.Pooled())
		if err != nil {
			direct.Close()
			return nil, nil, nil, nil, err
		}
		checkPooledSettings(ctx, pool, cfg.IdleInTx, log)
		return pool, direct, nil, func() { pool.Close(); direct.Close() }, nil
	}
	if !cfg.demo() {
		pool, err := store.Open(ctx, cfg.DatabaseURL, 30*time.Second, store.IdleInTransactionTimeout(cfg.IdleInTx))
		if err != nil {
			return nil, nil, nil, nil, err
		}
		return pool, pool, nil, pool.Close, nil
	}
	cluster, err := pgcluster.Start(ctx, pgcluster.Config{DataDir: filepath.Join(cfg.DataDir, "pg"), Durable: true, Logger: log})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	stopCluster := func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cluster.Stop(stopCtx); err != nil {
			log.Error("stopping postgres", "error", err)
		}
	}
	if err := createDatabase(ctx, cluster.URL("postgres"), "countersign"); err != nil {
		stopCluster()
		return nil, nil, nil, nil, err
	}
	pool, err = store.Open(ctx, cluster.URL("countersign"), 30*time.Second, store.IdleInTransactionTimeout(cfg.IdleInTx))
	if err != nil {
		stopCluster()
		return nil, nil, nil, nil, err
	}
	return pool, pool, cluster, func() { pool.Close(); stopCluster() }, nil
}

// checkPooledSettings warns when sessions reached through the pooler have
// no idle-in-transaction timeout: the console cannot send it at connect time
// there, and without it a frozen console's transaction holds its row locks.
func checkPooledSettings(ctx context.Context, pool *pgxpool.Pool, want time.Duration, log *slog.Logger) {
	var got string
	if err := pool.QueryRow(ctx, "SHOW idle_in_transaction_session_timeout").Scan(&got); err != nil {
		log.Warn("could not read idle_in_transaction_session_timeout through the pooler", "error", err)
		return
	}
	if got == "0" && want > 0 {
		log.Warn("sessions through the pooler have no idle_in_transaction_session_timeout; set it on the role "+
			"(ALTER ROLE … SET idle_in_transaction_session_timeout = '10s') or in the pooler's connect_query", "want", want)
	}
}

func createDatabase(ctx context.Context, serverURL, name string) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return fmt.Errorf("connect to embedded postgres: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("look for database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// sweep removes dead sessions, expired throttle records, ended
// confirmation links and expired customer passkey ceremonies every ten
// minutes until ctx ends.
func sweep(ctx context.Context, log *slog.Logger, sessions *kit.SessionStore, acc *accounts.Service, links *confirmation.Service, custKeys *custkeys.Service) {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		if n, err := sessions.Sweep(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Warn("session sweep failed", "error", err)
		} else if n > 0 {
			log.Info("expired sessions removed", "count", n)
		}
		if err := acc.PruneFailures(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Warn("sign-in failure prune failed", "error", err)
		}
		if n, err := links.SweepLinks(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Warn("confirmation link sweep failed", "error", err)
		} else if n > 0 {
			log.Info("ended confirmation links removed", "count", n)
		}
		if n, err := custKeys.SweepCeremonies(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Warn("customer passkey ceremony sweep failed", "error", err)
		} else if n > 0 {
			log.Info("expired customer passkey ceremonies removed", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
