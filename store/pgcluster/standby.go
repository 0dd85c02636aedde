package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// StandbyConfig describes a streaming standby of a running primary.
type StandbyConfig struct {
	// DataDir receives the base backup; it must not exist yet or be empty.
	DataDir string
	// Name is the standby's application_name (its cluster_name) and the
	// name of its replication slot on the primary; empty means "standby1".
	Name string
	// Synchronous makes the primary wait, before a commit returns, until
	// this standby has flushed it (synchronous_standby_names with
	// synchronous_commit on): an acknowledged commit survives the primary's
	// loss. Without it replication is asynchronous and the last commits
	// acknowledged on the primary may be missing on a promoted standby.
	Synchronous bool
	// Port is the port the standby dials to reach the primary: 0 means the
	// primary's own; a proxy's to put a slow network in between.
	Port int
	// Durable, BinDir and Logger are as in Config.
	Durable bool
	BinDir  string
	Logger  *slog.Logger
}

// StartStandby makes a streaming standby of primary: a replication slot on
// the primary, pg_basebackup into cfg.DataDir with its primary_conninfo
// (-R), then the server started in recovery, and with Synchronous the
// primary told to wait for it. It returns once the primary sees it
// streaming (in sync when asked).
func StartStandby(ctx context.Context, primary *Cluster, cfg StandbyConfig) (*Cluster, error) {
	name := cfg.Name
	if name == "" {
		name = "standby1"
	}
	bin := cfg.BinDir
	if bin == "" {
		var err error
		if bin, err = FindBinDir(); err != nil {
			return nil, err
		}
	}
	owner, err := serverUser()
	if err != nil {
		return nil, err
	}
	conn, err := pgx.Connect(ctx, primary.URL("postgres"))
	if err != nil {
		return nil, fmt.Errorf("pgcluster: standby: connect to the primary: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `SELECT pg_create_physical_replication_slot($1)
		WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)`, name); err != nil {
		return nil, fmt.Errorf("pgcluster: standby: replication slot: %w", err)
	}

	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: standby data dir: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dataDir), 0o755); err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if owner != nil {
		if reason := unreachableBy(owner, filepath.Dir(dataDir)); reason != "" {
			return nil, fmt.Errorf("pgcluster: standby data dir %s is not reachable by the postgres OS user: %s", dataDir, reason)
		}
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if err := owner.chown(dataDir); err != nil {
		return nil, err
	}
	port := cfg.Port
	if port == 0 {
		port = primary.port
	}
	source := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres password=%s application_name=%s sslmode=disable",
		port, primary.password, name)
	args := []string{"-D", dataDir, "-d", source, "-X", "stream", "-S", name, "-R", "--checkpoint=fast"}
	if !cfg.Durable {
		args = append(args, "--no-sync")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "pg_basebackup"), args...)
	cmd.SysProcAttr = owner.procAttr()
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgcluster: pg_basebackup: %w\n%s", err, out)
	}

	settings := []string{"cluster_name=" + name}
	if cfg.Synchronous {
		settings = append(settings, "synchronous_commit=on")
	}
	standby, err := Start(ctx, Config{DataDir: dataDir, BinDir: bin, Durable: cfg.Durable, Logger: cfg.Logger, Settings: settings})
	if err != nil {
		return nil, err
	}
	if cfg.Synchronous {
		// ALTER SYSTEM lands in postgresql.auto.conf, which the standby's
		// base backup already copied: it holds on this primary only until a
		// promotion, where the new primary must not wait for itself.
		if _, err := conn.Exec(ctx, "ALTER SYSTEM SET synchronous_standby_names = '"+name+"'"); err != nil {
			_ = standby.Stop(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("pgcluster: standby: synchronous_standby_names: %w", err)
		}
		if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
			_ = standby.Stop(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	want := "async"
	if cfg.Synchronous {
		want = "sync"
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var state string
		err := conn.QueryRow(ctx, `SELECT sync_state FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'`, name).Scan(&state)
		if err == nil && state == want {
			return standby, nil
		}
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			_ = standby.Stop(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("pgcluster: standby: pg_stat_replication: %w", err)
		}
		if time.Now().After(deadline) {
			_ = standby.Stop(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("pgcluster: standby %s not streaming %s within 30s (now %q); its log says:\n%s", name, want, state, standby.logSince(0))
		}
		select {
		case <-ctx.Done():
			_ = standby.Stop(context.WithoutCancel(ctx))
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Promote ends a standby's recovery and makes it a primary that takes
// writes, waiting until it does. A synchronous_standby_names inherited
// from the old primary is cleared first, so the new primary does not wait
// for a standby it does not have.
func (c *Cluster) Promote(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return fmt.Errorf("pgcluster: promote: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var promoted bool
	if err := conn.QueryRow(ctx, "SELECT pg_promote(true, 60)").Scan(&promoted); err != nil {
		return fmt.Errorf("pgcluster: promote: %w", err)
	}
	if !promoted {
		return errors.New("pgcluster: promote: the standby did not leave recovery within 60s")
	}
	if _, err := conn.Exec(ctx, "ALTER SYSTEM RESET synchronous_standby_names"); err != nil {
		return fmt.Errorf("pgcluster: promote: %w", err)
	}
	_, err = conn.Exec(ctx, "SELECT pg_reload_conf()")
	return err
}

// Follow points a standby named name at primary (after the primary was
// restarted on another port) and waits until the primary sees it stream.
func (c *Cluster) Follow(ctx context.Context, primary *Cluster, name string) error {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return fmt.Errorf("pgcluster: follow: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	info := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres password=%s application_name=%s sslmode=disable",
		primary.port, primary.password, name)
	if _, err := conn.Exec(ctx, "ALTER SYSTEM SET primary_conninfo = '"+info+"'"); err != nil {
		return fmt.Errorf("pgcluster: follow: %w", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("pgcluster: follow: %w", err)
	}
	pconn, err := pgx.Connect(ctx, primary.URL("postgres"))
	if err != nil {
		return fmt.Errorf("pgcluster: follow: %w", err)
	}
	defer pconn.Close(context.WithoutCancel(ctx))
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := pconn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'", name).Scan(&n); err == nil && n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("pgcluster: standby %s does not stream from the restarted primary within 30s", name)
}

// Kill ends the server with SIGKILL, as a crash or a lost machine would,
// and waits until its postmaster is gone.
func (c *Cluster) Kill() {
	if c == nil || c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exited
}

// MultiHostURL is a URL that reaches, of clusters, the one that takes
// writes (target_session_attrs=read-write): after a failover new
// connections find the promoted standby by themselves.
func MultiHostURL(database string, clusters ...*Cluster) string {
	hosts := make([]string, len(clusters))
	for i, c := range clusters {
		hosts[i] = net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port))
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword("postgres", clusters[0].password),
		Host: strings.Join(hosts, ","), Path: "/" + database, RawQuery: "sslmode=disable&target_session_attrs=read-write"}
	return u.String()
}
