package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
	"countersign/internal/slowtest"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) {
	dbtest.Main(m, func() {
		if binPath != "" {
			os.RemoveAll(filepath.Dir(binPath))
		}
	})
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// consoleBinary builds the console once per test process; TestMain removes
// it at the end.
func consoleBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "countersign-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "countersign")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// fleet is a console database and a demo shop that real console processes
// dispatch against, with a control plane in the test process that proposes
// (it never dispatches) and a count of the writes the shop receives.
type fleet struct {
	t        *testing.T
	ctx      context.Context
	dbURL    string
	shop     *demoshop.Shop
	shopURL  string
	cp       *controlplane.Service
	writes   atomic.Int64
	arrivals chan struct{}
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	return newFleetOn(t, dbtest.NewURL(t))
}

// newFleetOn is newFleet on a migrated console database of the caller's.
func newFleetOn(t *testing.T, dbURL string) *fleet {
	t.Helper()
	ctx := context.Background()
	f := &fleet{t: t, ctx: ctx, dbURL: dbURL, arrivals: make(chan struct{}, 1000)}
	shopPool := dbtest.NewBare(t)
	if err := demoshop.Migrate(ctx, shopPool); err != nil {
		t.Fatal(err)
	}
	f.shop = demoshop.New(shopPool, demoshop.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch {
			f.writes.Add(1)
			f.arrivals <- struct{}{}
		}
		f.shop.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.shopURL = srv.URL

	pool, err := store.Open(ctx, f.dbURL, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.New(pool)
	reg := adapter.NewRegistry(shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: srv.URL, Token: f.shop.Token(), Ledger: adapter.NewLedger(st, nil)}))
	f.cp = controlplane.New(st, reg, controlplane.Config{}, nil, nil)
	owner := f.owner(st)
	if err := f.cp.EnsurePolicies(ctx, &owner); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE policies SET stage = 5 WHERE action = 'update_product_description'`); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fleet) owner(st *store.Store) int64 {
	u, err := st.CreateUser(f.ctx, store.NewUser{Email: "owner@example.test", Name: "Owner", Role: "manager", PasswordHash: "x", At: time.Now()})
	if err != nil {
		f.t.Fatal(err)
	}
	return u.ID
}

// proposeEdits makes n automatically approved product edits in one task.
func (f *fleet) proposeEdits(n int) (controlplane.Task, []controlplane.Invocation) {
	f.t.Helper()
	cust, err := f.shop.CreateCustomer(f.ctx, demoshop.CustomerFixture{Email: "operator@example.test"})
	if err != nil {
		f.t.Fatal(err)
	}
	asst := controlplane.AssistantActor("asst", "Assistant")
	task, err := f.cp.CreateTask(f.ctx, asst, controlplane.NewTask{CustomerRef: cust.Email, ConversationID: "conv",
		AllowedActions: []string{"update_product_description"}, WriteBudget: 500, InflightLimit: 50, RatePerMinute: 10000,
		ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		f.t.Fatal(err)
	}
	var invs []controlplane.Invocation
	for i := range n {
		// One product each: an edit changes its product's version.
		p, err := f.shop.CreateProduct(f.ctx, demoshop.ProductFixture{Name: "Lamp", Description: "Old.", PriceCents: 1000, Stock: 3})
		if err != nil {
			f.t.Fatal(err)
		}
		args, _ := json.Marshal(map[string]any{"product_id": p.ID, "description": fmt.Sprintf("Edition %d.", i)})
		inv, err := f.cp.Propose(f.ctx, controlplane.Proposal{TaskID: task.ID, Action: "update_product_description", Args: args, Actor: asst})
		if err != nil {
			f.t.Fatal(err)
		}
		if inv.State != controlplane.Approved {
			f.t.Fatalf("edit routed to %s", inv.State)
		}
		invs = append(invs, inv)
	}
	return task, invs
}

// start runs a console process against the fleet's database and shop.
func (f *fleet) start(extraEnv ...string) *exec.Cmd {
	f.t.Helper()
	dataDir := f.t.TempDir()
	cmd := exec.Command(consoleBinary(f.t), "-addr", freeAddr(f.t), "-log-format", "json")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+f.dbURL, "SHOP_URL="+f.shopURL, "SHOP_TOKEN="+f.shop.Token(), "DATA_DIR="+dataDir,
		"DISPATCH_INTERVAL=100ms")
	cmd.Env = append(cmd.Env, extraEnv...)
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if f.t.Failed() {
			f.t.Logf("console %d logs:\n%s", cmd.Process.Pid, logs.String())
		}
	})
	return cmd
}

// waitStates polls the journal until every invocation is in want.
func (f *fleet) waitStates(task controlplane.Task, want controlplane.State, within time.Duration) map[controlplane.State]int {
	f.t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		invs, err := f.cp.Invocations(f.ctx, task.ID)
		if err != nil {
			f.t.Fatal(err)
		}
		counts := map[controlplane.State]int{}
		for _, inv := range invs {
			counts[inv.State]++
		}
		if counts[want] == len(invs) {
			return counts
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("after %s: states %v, want all %s", within, counts, want)
		}
		<-tick.C
	}
}

func (f *fleet) effectsFor(key string) int {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.shopURL+"/_ledger?request_id="+key, nil)
	req.Header.Set("Authorization", "Bearer "+f.shop.Token())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	var entries []demoshop.LedgerEntry
	if err := json.NewDecoder(res.Body).Decode(&entries); err != nil {
		f.t.Fatal(err)
	}
	return len(entries)
}

// TestKilledConsoleLeavesUnverifiedNeverResent kills a console process with
// SIGKILL while its writes are at the shop, restarts it, and checks the
// writes become unverified and none is sent again.
func TestKilledConsoleLeavesUnverifiedNeverResent(t *testing.T) {
	slowtest.Skip(t, "starts console processes and kills one")
	t.Parallel()
	f := newFleet(t)
	if err := f.shop.SetFault(demoshop.FaultRule{Route: "PATCH /products/{id}", LatencyMS: 1500}); err != nil {
		t.Fatal(err)
	}
	task, invs := f.proposeEdits(4)
	lease := []string{"ADAPTER_TIMEOUT=3s", "DISPATCH_LEASE_MARGIN=500ms"}
	first := f.start(lease...)
	for range invs { // every write has reached the shop and hangs there
		select {
		case <-f.arrivals:
		case <-time.After(60 * time.Second):
			t.Fatalf("writes did not reach the shop; %d arrived", f.writes.Load())
		}
	}
	counts := f.waitStates(task, controlplane.Dispatching, 10*time.Second)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()

	f.start(lease...)
	after := f.waitStates(task, controlplane.Unverified, 60*time.Second)
	f.shop.ClearFaults()
	effects := 0
	for _, inv := range invs {
		n := f.effectsFor(inv.IdempotencyKey)
		if n > 1 {
			t.Errorf("%s has %d effects at the shop", inv.ID, n)
		}
		effects += n
	}
	if got := f.writes.Load(); got != int64(len(invs)) {
		t.Errorf("the shop received %d writes for %d invocations: something was re-sent", got, len(invs))
	}
	t.Logf("crash: %d invocations %v at SIGKILL; after restart %v; shop writes received %d, effects %d",
		len(invs), counts, after, f.writes.Load(), effects)
}

// TestTwoConsolesShareTheQueue runs two console processes on one database:
// every approved write is sent exactly once between them.
func TestTwoConsolesShareTheQueue(t *testing.T) {
	slowtest.Skip(t, "starts two console processes")
	t.Parallel()
	f := newFleet(t)
	if err := f.shop.SetFault(demoshop.FaultRule{Route: "PATCH /products/{id}", LatencyMS: 20}); err != nil {
		t.Fatal(err)
	}
	f.start()
	f.start()
	task, invs := f.proposeEdits(40)
	counts := f.waitStates(task, controlplane.Completed, 90*time.Second)
	for _, inv := range invs {
		if n := f.effectsFor(inv.IdempotencyKey); n != 1 {
			t.Errorf("%s has %d effects at the shop, want 1", inv.ID, n)
		}
	}
	if got := f.writes.Load(); got != int64(len(invs)) {
		t.Errorf("the shop received %d writes for %d invocations", got, len(invs))
	}
	t.Logf("two instances: %d invocations %v, shop writes received %d", len(invs), counts, f.writes.Load())
}
