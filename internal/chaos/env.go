package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"countersign/store/pgcluster"
)

// Env is the campaign's PostgreSQL: one durable cluster (a restart must not
// lose a committed transaction, or a lost approval would be the test's own
// doing) reached through a loopback proxy whose port never changes, so the
// console processes keep one DATABASE_URL across restarts that move the
// cluster to a new port.
type Env struct {
	dir     string
	root    string // the folder holding dir and the standbys' data dirs
	cluster *pgcluster.Cluster
	proxy   *proxy
	log     *slog.Logger
	mu      sync.Mutex // held while the cluster restarts or fails over
	// replication is "", ReplicationSync or ReplicationAsync; with one, a
	// streaming standby follows the primary and pg_failover promotes it.
	replication string
	standby     *pgcluster.Cluster
	standbyDir  string
	// bouncer, when started, is PgBouncer in transaction mode in front of
	// proxy: the consoles' DATABASE_URL, with the proxy their direct one.
	bouncer *pgcluster.Bouncer
	// wan carries an asynchronous standby's stream from the primary with
	// a delay (replicationLag), as a standby in another region lags.
	wan        *proxy
	generation int // standbys made so far: each gets its own name and slot
}

// replicationLag is how far behind the primary an asynchronous standby's
// stream runs: what the primary acknowledged in the last this long before
// a failover is lost with it.
const replicationLag = time.Second

// Replication modes of a campaign's PostgreSQL.
const (
	ReplicationSync  = "sync"  // a commit returns once the standby flushed it
	ReplicationAsync = "async" // the primary acknowledges before the standby has it
)

// StartEnv starts the cluster under a fresh temporary folder and the proxy
// in front of it.
func StartEnv(ctx context.Context, log *slog.Logger) (*Env, error) {
	return StartReplicatedEnv(ctx, log, "")
}

// StartReplicatedEnv is StartEnv with a streaming standby beside the
// primary (replication ReplicationSync or ReplicationAsync; "" for none),
// which a pg_failover fault promotes.
func StartReplicatedEnv(ctx context.Context, log *slog.Logger, replication string) (*Env, error) {
	if replication != "" && replication != ReplicationSync && replication != ReplicationAsync {
		return nil, fmt.Errorf("chaos: replication %q: want %q, %q or empty", replication, ReplicationSync, ReplicationAsync)
	}
	// Not a test's TempDir: the postgres OS user must be able to reach it.
	root, err := os.MkdirTemp("", "countersign-chaos-pg-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(root, 0o755); err != nil {
		return nil, err
	}
	dir := root + "/primary-0"
	e := &Env{dir: dir, root: root, log: log, replication: replication}
	e.cluster, err = pgcluster.Start(ctx, pgcluster.Config{DataDir: dir, Durable: true, Logger: log})
	if err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	e.proxy, err = startProxy(e.cluster.Port())
	if err != nil {
		_ = e.cluster.Stop(ctx)
		os.RemoveAll(root)
		return nil, err
	}
	if replication == ReplicationAsync {
		if e.wan, err = startProxy(e.cluster.Port()); err != nil {
			e.Close()
			return nil, err
		}
		e.wan.lag = replicationLag
	}
	if replication != "" {
		if err := e.newStandby(ctx); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// newStandby makes a fresh standby of the current primary.
func (e *Env) newStandby(ctx context.Context) error {
	e.generation++
	name := "standby" + strconv.Itoa(e.generation)
	dir := e.root + "/" + name
	port := 0
	if e.wan != nil {
		e.wan.setTarget(e.cluster.Port())
		port = e.wan.port()
	}
	sb, err := pgcluster.StartStandby(ctx, e.cluster, pgcluster.StandbyConfig{DataDir: dir, Name: name, Port: port,
		Synchronous: e.replication == ReplicationSync, Durable: true, Logger: e.log})
	if err != nil {
		return err
	}
	e.standby, e.standbyDir = sb, dir
	return nil
}

// Failover does what losing the primary's machine does: SIGKILL the
// primary, promote the standby, point the proxy (the consoles' one
// DATABASE_URL) at it, then build a new standby from the new primary. What
// the old primary acknowledged and the standby had not received is gone;
// with synchronous replication that is nothing.
func (e *Env) Failover(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.standby == nil {
		return errors.New("chaos: pg_failover needs a standby (-replication sync or async)")
	}
	e.cluster.Kill()
	old := e.dir
	if err := e.standby.Promote(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	e.cluster, e.dir, e.standby = e.standby, e.standbyDir, nil
	e.proxy.setTarget(e.cluster.Port())
	os.RemoveAll(old)
	os.Remove(old + ".log")
	return e.newStandby(context.WithoutCancel(ctx))
}

// StartPooler puts PgBouncer in transaction pooling mode in front of the
// proxy; from then on PooledURL names the consoles' DATABASE_URL. The
// bouncer's connect_query sets the idle-in-transaction timeout the console
// cannot send through it.
func (e *Env) StartPooler(ctx context.Context) error {
	b, err := pgcluster.StartBouncer(ctx, pgcluster.BouncerConfig{Dir: e.root + "/pgbouncer", Server: e.URL("postgres"),
		PoolSize: 40, ConnectQuery: fmt.Sprintf("SET idle_in_transaction_session_timeout = %d", idleInTx.Milliseconds())})
	if err != nil {
		return err
	}
	e.bouncer = b
	return nil
}

// PooledURL is database name's URL through the bouncer, or "" without one.
func (e *Env) PooledURL(name string) string {
	if e.bouncer == nil {
		return ""
	}
	return e.bouncer.URL(name)
}

// Close stops the proxy and the cluster and removes its files.
func (e *Env) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bouncer != nil {
		e.bouncer.Stop()
	}
	if e.proxy != nil {
		e.proxy.close()
	}
	if e.wan != nil {
		e.wan.close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = e.cluster.Stop(ctx)
	if e.standby != nil {
		_ = e.standby.Stop(ctx)
	}
	os.RemoveAll(e.root)
}

// URL returns the URL of database name through the proxy.
func (e *Env) URL(name string) string {
	if e.proxy == nil {
		return e.cluster.URL(name)
	}
	u, _ := url.Parse(e.cluster.URL(name))
	u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(e.proxy.port()))
	return u.String()
}

// CreateDatabase creates an empty database and returns its URL.
func (e *Env) CreateDatabase(ctx context.Context, prefix string) (string, string, error) {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	name := prefix + "_" + hex.EncodeToString(b)
	err := e.admin(ctx, "CREATE DATABASE "+name)
	return name, e.URL(name), err
}

// DropDatabase drops a database, disconnecting its sessions.
func (e *Env) DropDatabase(ctx context.Context, name string) error {
	return e.admin(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
}

func (e *Env) admin(ctx context.Context, sql string) error {
	var last error
	for range 30 {
		conn, err := pgx.Connect(ctx, e.URL("postgres"))
		if err == nil {
			_, err = conn.Exec(ctx, sql)
			conn.Close(ctx)
			if err == nil {
				return nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return fmt.Errorf("chaos: %s: %w", sql, last)
}

// RestartPostgres stops the cluster and starts it again: a fast shutdown,
// or with crash an immediate one (SIGQUIT: no checkpoint, recovery from
// the WAL at start). It returns once the server accepts connections again.
func (e *Env) RestartPostgres(ctx context.Context, crash bool, down time.Duration) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if crash {
		_ = syscall.Kill(e.cluster.PID(), syscall.SIGQUIT)
		select {
		case <-e.cluster.Exited():
		case <-time.After(30 * time.Second):
			return errors.New("chaos: postgres did not exit on SIGQUIT")
		}
	} else {
		stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := e.cluster.Stop(stopCtx)
		cancel()
		if err != nil {
			return err
		}
	}
	time.Sleep(down)
	c, err := pgcluster.Start(context.WithoutCancel(ctx), pgcluster.Config{DataDir: e.dir, Durable: true, Logger: e.log})
	if err != nil {
		return err
	}
	e.cluster = c
	e.proxy.setTarget(c.Port())
	if e.wan != nil {
		e.wan.setTarget(c.Port()) // the standby dials the delaying proxy, which follows
		return nil
	}
	if e.standby != nil {
		// The restarted primary listens on a new port: the standby follows.
		return e.standby.Follow(context.WithoutCancel(ctx), c, "standby"+strconv.Itoa(e.generation))
	}
	return nil
}

// proxy forwards loopback TCP connections to the cluster's current port.
type proxy struct {
	l      net.Listener
	mu     sync.Mutex
	target int
	conns  map[net.Conn]struct{}
	// lag delays what the server sends to the client (set before use).
	lag time.Duration
}

func startProxy(target int) (*proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{l: l, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	return p, nil
}

func (p *proxy) port() int { return p.l.Addr().(*net.TCPAddr).Port }

// setTarget points new connections at port and closes the old ones: they
// led to a server that is gone.
func (p *proxy) setTarget(port int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = port
	for c := range p.conns {
		c.Close()
	}
}

func (p *proxy) close() {
	p.l.Close()
	p.setTarget(0)
}

func (p *proxy) serve() {
	for {
		in, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.pipe(in)
	}
}

func (p *proxy) pipe(in net.Conn) {
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	out, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(target)), 5*time.Second)
	if err != nil {
		in.Close()
		return
	}
	p.mu.Lock()
	p.conns[in], p.conns[out] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() {
		if p.lag > 0 {
			delayedCopy(in, out, p.lag)
		} else {
			_, _ = io.Copy(in, out)
		}
		done <- struct{}{}
	}()
	<-done
	in.Close()
	out.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, in)
	delete(p.conns, out)
	p.mu.Unlock()
}

// delayedCopy copies src to dst, each chunk leaving lag after it arrived,
// in order.
func delayedCopy(dst io.Writer, src io.Reader, lag time.Duration) {
	type chunk struct {
		at time.Time
		b  []byte
	}
	chunks := make(chan chunk, 4096)
	go func() {
		failed := false
		for c := range chunks {
			time.Sleep(time.Until(c.at))
			if !failed {
				if _, err := dst.Write(c.b); err != nil {
					failed = true
				}
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			chunks <- chunk{at: time.Now().Add(lag), b: append([]byte(nil), buf[:n]...)}
		}
		if err != nil {
			close(chunks)
			return
		}
	}
}
