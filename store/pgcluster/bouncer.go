package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// BouncerConfig describes a PgBouncer to start in front of a PostgreSQL
// server.
type BouncerConfig struct {
	// Dir holds the bouncer's configuration, its log and its pid file; it
	// is created when missing.
	Dir string
	// Server is a postgres:// URL of the server (its host, port, user and
	// password; the database is ignored: every database is served).
	Server string
	// PoolMode is "transaction" (the default), "session" or "statement".
	PoolMode string
	// PoolSize is the server connections per database and user; 0 means 40.
	PoolSize int
	// ConnectQuery runs on each new server connection before any client
	// uses it, e.g. "SET idle_in_transaction_session_timeout = 10000":
	// a pooler refuses most startup parameters, so settings that the
	// console would send at connect time go here (or on the role).
	ConnectQuery string
	// Binary is the pgbouncer executable; empty means pgbouncer on PATH or
	// /usr/sbin/pgbouncer (Debian's package).
	Binary string
}

// Bouncer is a running PgBouncer owned by this process.
type Bouncer struct {
	port     int
	user     string
	password string
	cmd      *exec.Cmd
	exited   chan struct{}
	logPath  string
}

// FindBouncer returns the pgbouncer executable, or an error telling how to
// install it.
func FindBouncer() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/pgbouncer"); err == nil {
		return "/usr/sbin/pgbouncer", nil
	}
	return "", errors.New("pgcluster: no pgbouncer: install it (apt-get install -y pgbouncer; .ci/install-deps does)")
}

// StartBouncer starts PgBouncer on a free loopback port in front of
// cfg.Server and waits until it answers. Run as root it runs as the
// postgres OS user, as the server does (PgBouncer refuses root).
func StartBouncer(ctx context.Context, cfg BouncerConfig) (*Bouncer, error) {
	bin := cfg.Binary
	if bin == "" {
		var err error
		if bin, err = FindBouncer(); err != nil {
			return nil, err
		}
	}
	server, err := url.Parse(cfg.Server)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: bouncer server URL: %w", err)
	}
	password, _ := server.User.Password()
	b := &Bouncer{user: server.User.Username(), password: password, exited: make(chan struct{}),
		logPath: filepath.Join(cfg.Dir, "pgbouncer.log")}
	if b.port, err = freePort(); err != nil {
		return nil, err
	}
	owner, err := serverUser()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	ini := filepath.Join(cfg.Dir, "pgbouncer.ini")
	users := filepath.Join(cfg.Dir, "userlist.txt")
	if err := os.WriteFile(ini, []byte(b.ini(cfg, server, users)), 0o600); err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if err := os.WriteFile(users, []byte(fmt.Sprintf("%q %q\n", b.user, b.password)), 0o600); err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if err := owner.chown(cfg.Dir, ini, users); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, ini)
	attr := owner.procAttr()
	attr.Setpgid = true
	attr.Pdeathsig = syscall.SIGINT
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pgcluster: start pgbouncer: %w", err)
	}
	b.cmd = cmd
	go func() {
		_ = cmd.Wait()
		close(b.exited)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := pgconn.Connect(ctx, b.URL("postgres"))
		if err == nil {
			_ = conn.Close(ctx)
			return b, nil
		}
		select {
		case <-b.exited:
			return nil, fmt.Errorf("pgcluster: pgbouncer exited during start-up; its log says:\n%s", b.logTail())
		case <-ctx.Done():
			b.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.Stop()
			return nil, fmt.Errorf("pgcluster: pgbouncer did not accept connections within 20s (%w); its log says:\n%s", err, b.logTail())
		}
	}
}

func (b *Bouncer) ini(cfg BouncerConfig, server *url.URL, users string) string {
	mode := cfg.PoolMode
	if mode == "" {
		mode = "transaction"
	}
	size := cfg.PoolSize
	if size == 0 {
		size = 40
	}
	target := fmt.Sprintf("host=%s port=%s user=%s password=%s", server.Hostname(), server.Port(), b.user, b.password)
	if cfg.ConnectQuery != "" {
		target += " connect_query='" + strings.ReplaceAll(cfg.ConnectQuery, "'", "''") + "'"
	}
	return strings.Join([]string{
		"[databases]",
		"* = " + target,
		"[pgbouncer]",
		"listen_addr = 127.0.0.1",
		"listen_port = " + strconv.Itoa(b.port),
		"unix_socket_dir =",
		"auth_type = scram-sha-256",
		"auth_file = " + users,
		"pool_mode = " + mode,
		"default_pool_size = " + strconv.Itoa(size),
		"max_client_conn = 1000",
		"logfile = " + b.logPath,
		"pidfile = " + filepath.Join(cfg.Dir, "pgbouncer.pid"),
		"",
	}, "\n")
}

// URL returns a connection URL for database name through the bouncer.
func (b *Bouncer) URL(database string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(b.user, b.password),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port)), Path: "/" + database, RawQuery: "sslmode=disable"}
	return u.String()
}

// Port is the TCP port the bouncer listens on.
func (b *Bouncer) Port() int { return b.port }

// Stop ends the bouncer (SIGINT: it closes its connections at once) and
// waits for it to exit.
func (b *Bouncer) Stop() {
	if b.cmd == nil || b.cmd.Process == nil {
		return
	}
	_ = b.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-b.exited:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.exited
	}
}

func (b *Bouncer) logTail() string {
	data, _ := os.ReadFile(b.logPath)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}
