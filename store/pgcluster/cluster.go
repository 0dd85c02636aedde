// Package pgcluster runs a private PostgreSQL server from the machine's own
// binaries: initdb on first use, a free loopback port chosen at every start, a
// unix socket beside the data, and a clean stop. When the process is root it
// runs PostgreSQL as the "postgres" OS user, because PostgreSQL refuses root.
package pgcluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
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

	"github.com/jackc/pgx/v5/pgconn"
)

// Config describes the cluster to start.
type Config struct {
	// DataDir holds the cluster; it is created by initdb when empty.
	DataDir string
	// BinDir holds initdb and postgres; empty means the newest
	// /usr/lib/postgresql/*/bin (or PG_BIN when set).
	BinDir string
	// Durable keeps fsync on. Tests turn it off for speed.
	Durable bool
	// Logger receives one line per lifecycle step; nil discards them.
	Logger *slog.Logger
	// Settings are extra server settings ("name=value"), given after the
	// defaults so they win (e.g. "synchronous_commit=on" without Durable).
	Settings []string
}

// Cluster is a running PostgreSQL server owned by this process.
type Cluster struct {
	dataDir   string
	socketDir string
	port      int
	password  string
	cmd       *exec.Cmd
	exited    chan struct{}
	waitErr   error
	logPath   string
	log       *slog.Logger
	settings  []string
}

const passwordFile = "countersign-superuser.password"

// errEarlyExit is a server that exited before accepting connections.
var errEarlyExit = errors.New("postgres exited during start-up")

// Start initialises the data directory if needed, clears what a killed
// earlier run left behind, and starts PostgreSQL on a free loopback port. It
// returns once the server accepts connections, or an error that quotes the
// server's own log.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
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
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: data dir: %w", err)
	}
	// Missing parents are made traversable, so the postgres OS user can reach
	// the data dir; existing ones are checked below and left as they are.
	if err := os.MkdirAll(filepath.Dir(dataDir), 0o755); err != nil {
		return nil, fmt.Errorf("pgcluster: create parent of data dir: %w", err)
	}
	if owner != nil {
		if reason := unreachableBy(owner, filepath.Dir(dataDir)); reason != "" {
			fallback := filepath.Join(os.TempDir(), "countersign-pg-"+shortHash(dataDir))
			log.Warn("data dir is not reachable by the postgres OS user; using a folder under the temp dir instead",
				"wanted", dataDir, "reason", reason, "using", fallback)
			dataDir = fallback
		}
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("pgcluster: create data dir: %w", err)
	}
	if err := owner.chown(dataDir); err != nil {
		return nil, err
	}

	c := &Cluster{dataDir: dataDir, log: log, logPath: dataDir + ".log", settings: cfg.Settings}
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := c.initdb(ctx, bin, owner, cfg.Durable); err != nil {
			return nil, err
		}
	}
	pw, err := os.ReadFile(filepath.Join(dataDir, passwordFile))
	if err != nil {
		return nil, fmt.Errorf("pgcluster: read superuser password (delete %s to start afresh): %w", dataDir, err)
	}
	c.password = strings.TrimSpace(string(pw))
	if err := clearStaleServer(dataDir, log); err != nil {
		return nil, err
	}
	if c.socketDir, err = socketDirFor(dataDir, owner); err != nil {
		return nil, err
	}

	// A port picked free may be taken before the server binds it, and a
	// killed run's last processes may still be leaving: try a few times.
	for attempt := 1; ; attempt++ {
		err := c.start(ctx, bin, owner, cfg.Durable)
		if err == nil {
			log.Info("postgres started", "data_dir", dataDir, "port", c.port, "socket_dir", c.socketDir)
			return c, nil
		}
		if attempt == 3 || !errors.Is(err, errEarlyExit) {
			return nil, err
		}
		log.Warn("postgres did not start; trying again", "attempt", attempt, "error", err)
		waitForOrphans(dataDir, log)
	}
}

func (c *Cluster) initdb(ctx context.Context, bin string, owner *osUser, durable bool) error {
	c.log.Info("initialising postgres data dir", "data_dir", c.dataDir)
	pw := randomHex(24)
	pwPath := filepath.Join(c.dataDir+".init", "pw")
	if err := os.MkdirAll(filepath.Dir(pwPath), 0o700); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	defer os.RemoveAll(filepath.Dir(pwPath))
	if err := os.WriteFile(pwPath, []byte(pw+"\n"), 0o600); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if err := owner.chown(filepath.Dir(pwPath), pwPath); err != nil {
		return err
	}
	args := []string{"-D", c.dataDir, "-U", "postgres", "--pwfile", pwPath,
		"--auth-host=scram-sha-256", "--auth-local=scram-sha-256", "-E", "UTF8", "--no-locale"}
	if !durable {
		args = append(args, "--no-sync")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), args...)
	cmd.SysProcAttr = owner.procAttr()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgcluster: initdb failed: %w\n%s", err, out)
	}
	// Written only after initdb succeeded, so a half-made cluster is detectable.
	if err := os.WriteFile(filepath.Join(c.dataDir, passwordFile), []byte(pw+"\n"), 0o600); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return owner.chown(filepath.Join(c.dataDir, passwordFile))
}

func (c *Cluster) start(ctx context.Context, bin string, owner *osUser, durable bool) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	c.port = port
	logFile, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("pgcluster: open server log: %w", err)
	}
	defer logFile.Close()
	logStart, _ := logFile.Seek(0, 2)

	args := []string{"-D", c.dataDir, "-p", strconv.Itoa(port), "-k", c.socketDir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300"}
	if !durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	for _, kv := range c.settings {
		args = append(args, "-c", kv)
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	attr := owner.procAttr()
	// Own process group: a terminal's Ctrl-C reaches us, and we stop the
	// server after the console has drained. Pdeathsig stops it if we are killed.
	attr.Setpgid = true
	attr.Pdeathsig = syscall.SIGINT
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgcluster: start postgres: %w", err)
	}
	c.cmd = cmd
	c.exited = make(chan struct{})
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()

	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	for {
		conn, err := pgconn.Connect(ctx, c.URL("postgres"))
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case <-c.exited:
			why := errEarlyExit
			if c.waitErr != nil {
				why = fmt.Errorf("%w (%w)", errEarlyExit, c.waitErr)
			}
			return fmt.Errorf("pgcluster: %w; its log says:\n%s", why, c.logSince(logStart))
		case <-ctx.Done():
			_ = c.Stop(context.Background())
			return ctx.Err()
		case <-deadline:
			_ = c.Stop(context.Background())
			return fmt.Errorf("pgcluster: postgres did not accept connections within 60s; its log says:\n%s", c.logSince(logStart))
		case <-tick.C:
		}
	}
}

func (c *Cluster) logSince(offset int64) string {
	b, err := os.ReadFile(c.logPath)
	if err != nil {
		return "(log unreadable)"
	}
	if int64(len(b)) <= offset {
		return "(the server wrote nothing)"
	}
	b = b[offset:]
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(bytes.TrimSpace(b))
}

// URL returns a connection URL for database name over TCP on loopback.
func (c *Cluster) URL(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword("postgres", c.password),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port is the TCP port the server listens on.
func (c *Cluster) Port() int { return c.port }

// DataDir is where the cluster lives (it may differ from the configured one
// when that was not reachable by the postgres OS user).
func (c *Cluster) DataDir() string { return c.dataDir }

// SocketDir is the folder holding the server's unix socket.
func (c *Cluster) SocketDir() string { return c.socketDir }

// PID is the postmaster's process id.
func (c *Cluster) PID() int { return c.cmd.Process.Pid }

// Stop asks the server for a fast shutdown and waits for it, escalating to an
// immediate shutdown and then a kill if ctx ends first.
func (c *Cluster) Stop(ctx context.Context) error {
	if c == nil || c.cmd == nil {
		return nil
	}
	select {
	case <-c.exited:
		return nil
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
		c.log.Info("postgres stopped", "data_dir", c.dataDir)
		return nil
	case <-ctx.Done():
	}
	_ = c.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
	return fmt.Errorf("pgcluster: postgres did not stop in time: %w", ctx.Err())
}

// Exited is closed when the server process has ended.
func (c *Cluster) Exited() <-chan struct{} { return c.exited }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgcluster: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
