package chaos

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Console timing: short enough that a lost dispatch turns unverified within
// a round, long enough that two cores shared with PostgreSQL keep up.
const (
	adapterTimeout = 2 * time.Second
	leaseMargin    = time.Second
	sweepInterval  = 500 * time.Millisecond
	// leaseLength is the console's dispatch lease: 2 × adapter timeout + margin.
	leaseLength = 2*adapterTimeout + leaseMargin
	// idleInTx is the consoles' idle-in-transaction timeout: PostgreSQL
	// ends the session of a console frozen inside a transaction this long
	// after it stopped, releasing the rows it held from the sweep.
	idleInTx = time.Second
	// reconcileFirst is when a console first looks an unverified write up
	// again by itself (then 2 s later, 4 s, 8 s …); shopSettle how long
	// after a call the shop's ledger proves it was not applied: longer than
	// the adapter timeout, after which the shop drops a call's request.
	reconcileFirst = time.Second
	shopSettle     = 10 * time.Second
)

// console is one console process slot: the process is killed and started
// again by faults, keeps its address, and is restarted by the slot's
// keeper when it exits on its own (e.g. its database was unreachable at
// start).
type console struct {
	n      int
	bin    string
	env    []string
	addr   string
	dir    string
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	logs   *bytes.Buffer
	down   bool // killed by a fault, not to be restarted by the keeper
	closed bool
}

func newConsole(n int, bin, dbURL, shopURL, shopToken, sessionKey string) (*console, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	dir, err := os.MkdirTemp("", "countersign-chaos-console-")
	if err != nil {
		return nil, err
	}
	env := append(os.Environ(), "DATABASE_URL="+dbURL, "SHOP_URL="+shopURL, "SHOP_TOKEN="+shopToken, "DATA_DIR="+dir,
		"SESSION_KEYS="+sessionKey, "DISPATCH_INTERVAL="+sweepInterval.String(),
		"ADAPTER_TIMEOUT="+adapterTimeout.String(), "DISPATCH_LEASE_MARGIN="+leaseMargin.String(),
		"DB_IDLE_IN_TRANSACTION_TIMEOUT="+idleInTx.String(),
		"RECONCILE_FIRST="+reconcileFirst.String(), "SHOP_SETTLE_AFTER="+shopSettle.String(),
		"API_RATE_PER_MINUTE=100000", "METRICS_REFRESH=10m", "NOTIFY_INTERVAL=10m", "LOG_FORMAT=json",
		"SHUTDOWN_GRACE=2s")
	return &console{n: n, bin: bin, env: env, addr: addr, dir: dir, logs: &bytes.Buffer{}}, nil
}

// URL is the console's base URL.
func (c *console) URL() string { return "http://" + c.addr }

// start runs the process and keeps it running until kill or close.
func (c *console) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.down = false
	return c.spawn()
}

func (c *console) spawn() error {
	cmd := exec.Command(c.bin, "-addr", c.addr)
	cmd.Env = c.env
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return err
	}
	c.cmd, c.logs, c.exited = cmd, &logs, make(chan struct{})
	exited := c.exited
	go func() {
		_ = cmd.Wait()
		close(exited)
		c.mu.Lock()
		again := !c.down && !c.closed && c.cmd == cmd
		c.mu.Unlock()
		if again {
			time.Sleep(500 * time.Millisecond)
			c.mu.Lock()
			if !c.down && !c.closed && c.cmd == cmd {
				_ = c.spawn()
			}
			c.mu.Unlock()
		}
	}()
	return nil
}

// kill sends SIGKILL and waits for the process to end; it stays down until
// start.
func (c *console) kill() {
	c.mu.Lock()
	c.down = true
	cmd, exited := c.cmd, c.exited
	c.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// freeze stops the process without ending it (SIGSTOP), as a long GC
// pause or a frozen VM would; thaw lets it run on. A frozen console's
// leases run out and other instances' sweeps make its work unverified.
func (c *console) freeze() { c.signal(syscall.SIGSTOP) }

func (c *console) thaw() { c.signal(syscall.SIGCONT) }

func (c *console) signal(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil {
		_ = c.cmd.Process.Signal(sig)
	}
}

// close stops the process for good (SIGKILL: nothing a console does at
// shutdown matters to the journal) and removes its folder.
func (c *console) close() {
	c.mu.Lock()
	c.closed = true
	cmd, exited := c.cmd, c.exited
	c.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Process.Signal(syscall.SIGCONT)
		<-exited
	}
	os.RemoveAll(c.dir)
}

// up reports whether the console answers /readyz.
func (c *console) up(ctx context.Context) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.URL()+"/readyz", nil)
	res, err := quick.Do(req)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// waitUp waits until the console is ready.
func (c *console) waitUp(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for !c.up(ctx) {
		if time.Now().After(deadline) {
			c.mu.Lock()
			tail := c.logs.String()
			c.mu.Unlock()
			if len(tail) > 3000 {
				tail = tail[len(tail)-3000:]
			}
			return fmt.Errorf("chaos: console %d not ready within %s; its log ends:\n%s", c.n, within, tail)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

var quick = &http.Client{Timeout: 2 * time.Second}
