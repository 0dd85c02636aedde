package controlplane_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/store/dbtest"
)

// commitCounter is a pgx tracer that counts durable commits: transactions
// that changed or locked a row (and so were given a transaction id and
// wait for the WAL at commit), and single statements outside a
// transaction that did. Reads, empty claims and the notifications' own
// statements (synchronous_commit off) are not counted.
type commitCounter struct {
	mu      sync.Mutex
	wrote   map[*pgx.Conn]bool // connections in a transaction: whether it wrote
	commits int
	// statements counts every statement, a round trip each.
	statements int
	// capture, while set, keeps every statement with its arguments.
	capture  bool
	captured []capturedStatement
}

// capturedStatement is one statement a traced pool ran, with its
// arguments.
type capturedStatement struct {
	sql  string
	args []any
}

type sqlKey struct{}

func (c *commitCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	if c.capture {
		c.captured = append(c.captured, capturedStatement{sql: d.SQL, args: d.Args})
	}
	c.mu.Unlock()
	return context.WithValue(ctx, sqlKey{}, strings.ToLower(strings.TrimSpace(d.SQL)))
}

// A batch is one round trip; each of its statements is counted as a
// statement of its transaction (the write path's batches only read and
// lock, inside a transaction).
func (c *commitCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	c.statements++
	c.mu.Unlock()
	return ctx
}

func (c *commitCounter) TraceBatchQuery(_ context.Context, conn *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.capture {
		c.captured = append(c.captured, capturedStatement{sql: d.SQL, args: d.Args})
	}
	c.end(conn, strings.ToLower(strings.TrimSpace(d.SQL)), d.CommandTag, d.Err)
}

func (c *commitCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (c *commitCounter) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, d pgx.TraceQueryEndData) {
	sql, _ := ctx.Value(sqlKey{}).(string)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.statements++
	c.end(conn, sql, d.CommandTag, d.Err)
}

// end notes what a statement that ended did to its connection's
// transaction; c.mu is held.
func (c *commitCounter) end(conn *pgx.Conn, sql string, tag pgconn.CommandTag, err error) {
	wrote, inTx := c.wrote[conn]
	switch {
	case strings.HasPrefix(sql, "begin"):
		c.wrote[conn] = false
	case sql == "commit":
		if wrote && err == nil {
			c.commits++
		}
		delete(c.wrote, conn)
	case sql == "rollback":
		delete(c.wrote, conn)
	case err != nil || !writes(sql, tag):
	case inTx:
		c.wrote[conn] = true
	case !strings.Contains(sql, "synchronous_commit"):
		c.commits++
	}
}

// writes says whether a statement that ended with tag changed or locked
// rows.
func writes(sql string, tag pgconn.CommandTag) bool {
	if tag.RowsAffected() == 0 {
		return false
	}
	if tag.Insert() || tag.Update() || tag.Delete() {
		return true
	}
	for _, w := range []string{" for update", " for no key update", " for share", " for key share", "insert into", "update ", "delete from"} {
		if strings.Contains(sql, w) {
			return true
		}
	}
	return false
}

func (c *commitCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commits
}

func (c *commitCounter) roundTrips() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.statements
}

// tracedSetup is setup over a console database whose every statement
// passes through the returned counter.
func tracedSetup(t *testing.T) (*testBundle, *commitCounter) {
	t.Helper()
	b, rec, _ := tracedSetupOn(t, dbtest.New(t))
	return b, rec
}

// tracedSetupOn is tracedSetup over base's database; it returns base too.
func tracedSetupOn(t *testing.T, base *pgxpool.Pool) (*testBundle, *commitCounter, *pgxpool.Pool) {
	t.Helper()
	rec := &commitCounter{wrote: map[*pgx.Conn]bool{}}
	cfg := base.Config().Copy()
	cfg.ConnConfig.Tracer = rec
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return setupOn(t, pool), rec, base
}

// chain counts the durable commits of one write: those from the start of
// decide until its request reaches the shop, and those after, until the
// dispatcher (started before decide, stopped once the write is done) has
// nothing left to do.
func (b *testBundle) chain(rec *commitCounter, decide func(cp *controlplane.Service) controlplane.Invocation) (before, after int) {
	b.t.Helper()
	events := b.taskEvents()
	cp := controlplane.New(b.store, b.reg, controlplane.Config{CallTimeout: time.Minute, LeaseMargin: time.Second, Workers: 4}, b.clock.Now, nil)
	idle := make(chan struct{}, 64)
	cp.SetHooks(controlplane.Hooks{Idle: func() {
		select {
		case idle <- struct{}{}:
		default:
		}
	}})
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan struct{})
	go func() { defer close(done); cp.RunDispatcher(ctx, time.Hour) }()
	defer func() { cancel(); <-done }()
	select {
	case <-idle: // the start-up scan found nothing
	case <-time.After(30 * time.Second):
		b.t.Fatal("the dispatcher's start-up scan never finished")
	}

	left := make(chan int, 1)
	start, trips := rec.count(), rec.roundTrips()
	defer func() { b.t.Logf("%d statements in all", rec.roundTrips()-trips) }()
	f := func() {
		select {
		case left <- rec.count() - start:
		default:
		}
	}
	b.arrived.Store(&f)
	defer b.arrived.Store(nil)
	inv := decide(cp)
	b.untilState(cp, events, inv.ID, controlplane.Completed)
	cancel()
	<-done // every send and its outcome recorded
	select {
	case before = <-left:
	default:
		b.t.Fatal("the write never reached the shop")
	}
	return before, rec.count() - start - before
}

// TestCommitsPerWrite counts the durable commits of an automatic (stage 5)
// write and of a customer-confirmed (stage 4) one, with a dispatcher
// running: at most 2 before the request leaves (for each: the proposal or
// the confirmation, the permit and the lease together) and 1 after (the
// outcome and its verification).
func TestCommitsPerWrite(t *testing.T) {
	t.Parallel()
	b, rec := tracedSetup(t)
	b.setStage("update_product_description", controlplane.StageAutonomous)
	b.setStage("change_shipping_address", controlplane.StageAssisted)
	task := b.task([]string{"update_product_description", "change_shipping_address"}, 10, 2, 1000)

	product := b.product()
	before, after := b.chain(rec, func(cp *controlplane.Service) controlplane.Invocation {
		raw := fmt.Sprintf(`{"product_id":%q,"description":"Counted"}`, product.ID)
		inv, err := cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: "update_product_description", Args: []byte(raw), Actor: b.assistant})
		if err != nil {
			t.Fatal(err)
		}
		return inv
	})
	t.Logf("automatic write: %d commits before the request left, %d after", before, after)
	if before > 2 || after > 1 {
		t.Errorf("automatic write: %d commits before the request left and %d after, want at most 2 and 1", before, after)
	}

	order, err := b.shop.CreateOrder(b.ctx, demoshop.OrderFixture{CustomerID: b.customer.ID})
	if err != nil {
		t.Fatal(err)
	}
	c := b.propose(task, "change_shipping_address", map[string]any{"order_id": order.ID, "address": map[string]any{
		"name": "Ada Buyer", "line1": "1 New St", "city": "Berlin", "postal_code": "10115", "country": "DE"}}, "")
	if c.State != controlplane.AwaitingConfirmation {
		t.Fatalf("address change is %s", c.State)
	}
	before, after = b.chain(rec, func(cp *controlplane.Service) controlplane.Invocation {
		d, err := customerDecide(b.ctx, cp, controlplane.CustomerDecision{Actor: controlplane.CustomerProvedOn(b.customer.Email, "code", c.ID),
			InvocationID: c.ID, Verb: controlplane.CustomerConfirm})
		if err != nil || !d.Done {
			t.Fatalf("confirm: %v (done %v)", err, d.Done)
		}
		return d.Invocation
	})
	t.Logf("confirmed write: %d commits from the confirmation until the request left, %d after", before, after)
	if before > 2 || after > 1 {
		t.Errorf("confirmed write: %d commits before the request left and %d after, want at most 2 and 1", before, after)
	}
}
