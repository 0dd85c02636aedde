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
	cluster *pgcluster.Cluster
	proxy   *proxy
	log     *slog.Logger
	mu      sync.Mutex // held while the cluster restarts
}

// StartEnv starts the cluster under a fresh temporary folder and the proxy
// in front of it.
func StartEnv(ctx context.Context, log *slog.Logger) (*Env, error) {
	// Not a test's TempDir: the postgres OS user must be able to reach it.
	dir, err := os.MkdirTemp("", "countersign-chaos-pg-")
	if err != nil {
		return nil, err
	}
	e := &Env{dir: dir, log: log}
	e.cluster, err = pgcluster.Start(ctx, pgcluster.Config{DataDir: dir, Durable: true, Logger: log})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	e.proxy, err = startProxy(e.cluster.Port())
	if err != nil {
		_ = e.cluster.Stop(ctx)
		os.RemoveAll(dir)
		return nil, err
	}
	return e, nil
}

// Close stops the proxy and the cluster and removes its files.
func (e *Env) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.proxy != nil {
		e.proxy.close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = e.cluster.Stop(ctx)
	os.RemoveAll(e.dir)
	os.Remove(e.dir + ".log")
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
	return nil
}

// proxy forwards loopback TCP connections to the cluster's current port.
type proxy struct {
	l      net.Listener
	mu     sync.Mutex
	target int
	conns  map[net.Conn]struct{}
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
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
	in.Close()
	out.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, in)
	delete(p.conns, out)
	p.mu.Unlock()
}
