package controlplane_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
	"countersign/store"
)

// dryRunGate is the demo shop's adapter with a gate in front of DryRun:
// once armed, the next dry run says so on reached and waits for release
// (or its context) before it goes on to the shop.
type dryRunGate struct {
	adapter.System
	armed atomic.Pointer[gateStop]
}

type gateStop struct{ reached, release chan struct{} }

// arm holds the next dry run.
func (g *dryRunGate) arm() *gateStop {
	stop := &gateStop{reached: make(chan struct{}), release: make(chan struct{})}
	g.armed.Store(stop)
	return stop
}

func (g *dryRunGate) DryRun(ctx context.Context, p adapter.Principal, action string, args json.RawMessage) (adapter.Quote, error) {
	if stop := g.armed.Swap(nil); stop != nil {
		close(stop.reached)
		select {
		case <-stop.release:
		case <-ctx.Done():
			return adapter.Quote{}, ctx.Err()
		}
	}
	return g.System.DryRun(ctx, p, action, args)
}

// setupGated is setup whose control plane reaches the shop through a
// dryRunGate and mints confirmation links.
func setupGated(t *testing.T) (*testBundle, *dryRunGate) {
	t.Helper()
	b := setup(t)
	ledger := adapter.NewLedger(b.store, b.clock.Now)
	g := &dryRunGate{System: shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: b.shopURL, Token: b.shop.Token(), Ledger: ledger, Now: b.clock.Now})}
	b.reg = adapter.NewRegistry(g)
	b.cp = controlplane.New(b.store, b.reg, controlplane.Config{CallTimeout: 5 * time.Second, LeaseMargin: time.Second}, b.clock.Now, nil)
	b.cp.MintLinksWith(&links{})
	return b, g
}

// keyedAssistant makes an assistant with every action of the shop turned
// on, the grant to act for any customer and a live API key, and returns it acting with that key, as the API
// and the MCP server make it act.
func (b *testBundle) keyedAssistant() controlplane.Actor {
	b.t.Helper()
	n := time.Now().UnixNano()
	a, err := b.store.InsertAssistant(b.ctx, store.Assistant{ID: fmt.Sprintf("asst_%d", n), Name: fmt.Sprintf("bot-%d", n), CreatedAt: b.clock.Now()})
	if err != nil {
		b.t.Fatal(err)
	}
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE assistants SET any_customer = true WHERE id = $1`, a.ID); err != nil {
		b.t.Fatal(err)
	}
	k, err := b.store.InsertAPIKey(b.ctx, store.APIKey{ID: fmt.Sprintf("key_%d", n), AssistantID: a.ID, Prefix: "csk_live_test",
		Hash: []byte(fmt.Sprint(n)), CreatedAt: b.clock.Now()})
	if err != nil {
		b.t.Fatal(err)
	}
	if err := b.switchActions(a.ID, true); err != nil {
		b.t.Fatal(err)
	}
	actor := controlplane.AssistantActor(a.ID, a.Name)
	actor.KeyID = k.ID
	return actor
}

// switchActions turns every action of the shop on or off for an assistant.
func (b *testBundle) switchActions(assistantID string, on bool) error {
	for _, spec := range b.reg.Systems()[0].Actions() {
		if err := b.store.SetAssistantAction(b.ctx, store.AssistantAction{AssistantID: assistantID, System: "shop", Action: spec.Name, Enabled: on}); err != nil {
			return err
		}
	}
	return nil
}

// recorded is what a write leaves on its task: its invocations (and
// their versions, which an edit or a supersession moves) and the
// customer's links to them.
func (b *testBundle) recorded(taskID string) string {
	b.t.Helper()
	var invs, versions, links int
	err := b.store.Pool().QueryRow(b.ctx, `SELECT count(*), coalesce(sum(version), 0),
		(SELECT count(*) FROM confirmation_links l JOIN invocations j ON j.id = l.invocation_id WHERE j.task_id = $1)
		FROM invocations WHERE task_id = $1`, taskID).Scan(&invs, &versions, &links)
	if err != nil {
		b.t.Fatal(err)
	}
	return fmt.Sprintf("%d invocations (versions summing to %d), %d links", invs, versions, links)
}

// writePath is a path that records a write after a dry run.
type writePath struct {
	name string
	// keyed: an assistant makes it with its API key.
	keyed bool
	// owned: a person or the customer makes it without a key, but the
	// write is the task's assistant's (store.StandingQuery.OwnerTask).
	owned bool
	// prepare makes what the write needs on a task of its own and returns
	// the task and the write, which dry-runs once.
	prepare func(b *testBundle, who controlplane.Actor) (controlplane.Task, func() error)
}

// writePaths are every path that records a write after a dry run.
var writePaths = []writePath{
	{name: "propose", keyed: true, prepare: func(b *testBundle, who controlplane.Actor) (controlplane.Task, func() error) {
		b.setStage("issue_refund", controlplane.StageAssisted)
		task := b.task([]string{"issue_refund"}, 10, 5, 60)
		args, _ := json.Marshal(refund(b.order(2).ID, 800, "damaged"))
		return task, func() error {
			_, err := b.cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: "issue_refund", Args: args, Actor: who})
			return err
		}
	}},
	{name: "propose with Idempotency-Key", keyed: true, prepare: func(b *testBundle, who controlplane.Actor) (controlplane.Task, func() error) {
		b.setStage("issue_refund", controlplane.StagePropose)
		task := b.task([]string{"issue_refund"}, 10, 5, 60)
		args, _ := json.Marshal(refund(b.order(2).ID, 800, "damaged"))
		return task, func() error {
			_, err := b.cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: "issue_refund", Args: args, Actor: who, ClientKey: "k-1"})
			return err
		}
	}},
	{name: "reversal", keyed: true, prepare: func(b *testBundle, who controlplane.Actor) (controlplane.Task, func() error) {
		sub, err := b.shop.CreateSubscription(b.ctx, demoshop.SubscriptionFixture{CustomerID: b.customer.ID, Plan: "Pro"})
		if err != nil {
			b.t.Fatal(err)
		}
		task := b.task([]string{"cancel_subscription"}, 10, 2, 60)
		cancel := b.propose(task, "cancel_subscription", map[string]any{"subscription_id": sub.ID, "reason_code": "switching", "effective": "end_of_period"}, "")
		if _, err := staffApprove(b.ctx, b.cp, b.agent, cancel.ID, cancel.Version); err != nil {
			b.t.Fatal(err)
		}
		b.dispatchAll()
		b.wantState(cancel.ID, controlplane.Completed)
		return task, func() error {
			_, err := b.cp.Reverse(b.ctx, who, cancel.ID)
			return err
		}
	}},
	{name: "hand-off draft sent on", prepare: func(b *testBundle, _ controlplane.Actor) (controlplane.Task, func() error) {
		b.setStage("issue_refund", controlplane.StageAssisted)
		task := b.task([]string{"issue_refund"}, 10, 5, 60)
		ho, id, digest := b.takenDraft(task, map[string]any{"summary": "Wants $8.00 back.",
			"would_propose": map[string]any{"action": "issue_refund", "args": refund(b.order(2).ID, 800, "damaged")}})
		return task, func() error {
			_, err := ho.SendDraft(b.ctx, b.agent, id, digest)
			return err
		}
	}},
	{name: "customer's re-quote", owned: true, prepare: func(b *testBundle, _ controlplane.Actor) (controlplane.Task, func() error) {
		b.setStage("issue_refund", controlplane.StageAssisted)
		task := b.task([]string{"issue_refund"}, 10, 5, 60)
		order := b.order(3)
		inv := b.propose(task, "issue_refund", refund(order.ID, 1000, "damaged"), "")
		b.refundAtTheShop(order.ID, 500)
		customer := controlplane.CustomerProvedOn(b.customer.Email, "code", inv.ID)
		return task, func() error {
			d, err := customerConfirm(b.ctx, b.cp, customer, inv.ID)
			if err == nil && !d.Requoted {
				b.t.Errorf("confirm of a changed order: %+v, want a successor", d)
			}
			return err
		}
	}},
	{name: "agent's edit", owned: true, prepare: func(b *testBundle, _ controlplane.Actor) (controlplane.Task, func() error) {
		b.setStage("issue_refund", controlplane.StagePropose)
		task := b.task([]string{"issue_refund"}, 10, 5, 60)
		order := b.order(3)
		inv := b.propose(task, "issue_refund", refund(order.ID, 1000, "damaged"), "")
		args, _ := json.Marshal(refund(order.ID, 900, "damaged"))
		return task, func() error {
			_, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: inv.ID, Verb: controlplane.StaffEdit, Version: inv.Version, Args: args})
			return err
		}
	}},
}

// refundAtTheShop refunds part of an order at the shop itself, so the
// order's version moves under a quote.
func (b *testBundle) refundAtTheShop(orderID string, cents int64) {
	b.t.Helper()
	body, _ := json.Marshal(map[string]any{"order_id": orderID, "amount_cents": cents, "reason": "goodwill"})
	res, err := b.shopPost("/refunds", "application/json", bytes.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	res.Body.Close()
}

// intervention is what a person (or time) does while a write's dry run
// runs, and the code the write is then refused with.
type intervention struct {
	name string
	// keyed: it concerns the key a write is made with.
	keyed bool
	// ofAssistant: it concerns the assistant whose write it is, made with
	// its key or owned by it.
	ofAssistant bool
	code        string
	// do makes the change; who is the write's assistant on the paths
	// that have one, else the agent.
	do func(b *testBundle, task controlplane.Task, who controlplane.Actor) error
}

var interventions = []intervention{
	{name: "cancel the task", code: "task_not_active", do: func(b *testBundle, task controlplane.Task, _ controlplane.Actor) error {
		_, err := b.cp.ChangeTask(b.ctx, b.agent, task.ID, controlplane.TaskCancel, 0)
		return err
	}},
	{name: "pause the task", code: "task_not_active", do: func(b *testBundle, task controlplane.Task, _ controlplane.Actor) error {
		_, err := b.cp.ChangeTask(b.ctx, b.agent, task.ID, controlplane.TaskPause, 0)
		return err
	}},
	{name: "let the task expire", code: "task_expired", do: func(b *testBundle, _ controlplane.Task, _ controlplane.Actor) error {
		b.clock.Advance(25 * time.Hour)
		return nil
	}},
	{name: "switch the action's policy off", code: "action_disabled", do: func(b *testBundle, _ controlplane.Task, _ controlplane.Actor) error {
		_, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET enabled = false, version = version + 1 WHERE system = 'shop'`)
		return err
	}},
	{name: "revoke the key", keyed: true, code: "key_revoked", do: func(b *testBundle, _ controlplane.Task, who controlplane.Actor) error {
		_, err := b.store.RevokeAPIKey(b.ctx, who.KeyID, b.clock.Now())
		return err
	}},
	{name: "disable the assistant", ofAssistant: true, code: "assistant_disabled", do: func(b *testBundle, _ controlplane.Task, who controlplane.Actor) error {
		now := b.clock.Now()
		return b.store.SetAssistantDisabled(b.ctx, who.ID, &now)
	}},
	{name: "switch the action off for the assistant", ofAssistant: true, code: "action_not_enabled", do: func(b *testBundle, _ controlplane.Task, who controlplane.Actor) error {
		return b.switchActions(who.ID, false)
	}},
	{name: "withdraw the assistant's write budget", keyed: true, code: "proposal_budget_spent", do: func(b *testBundle, _ controlplane.Task, who controlplane.Actor) error {
		_, err := b.store.SetAssistantGrants(b.ctx, who.ID, store.AssistantGrants{MaxWriteBudget: 0, MaxInflightLimit: 1, MaxRatePerMinute: 1,
			AnyCustomer: true}, store.Event{At: b.clock.Now(), ActorKind: "system", ActorID: "test", Action: "assistant.grants_changed", Data: []byte(`{}`)})
		return err
	}},
	{name: "withdraw the any-customer grant", ofAssistant: true, code: "customer_not_vouched", do: func(b *testBundle, _ controlplane.Task, who controlplane.Actor) error {
		_, err := b.store.SetAssistantGrants(b.ctx, who.ID, store.AssistantGrants{MaxWriteBudget: 100, MaxInflightLimit: 10, MaxRatePerMinute: 60},
			store.Event{At: b.clock.Now(), ActorKind: "system", ActorID: "test", Action: "assistant.grants_changed", Data: []byte(`{}`)})
		return err
	}},
}

// writeActors is who makes path's write (the keyed assistant, or the
// agent) and prepares it, with the write's assistant (the keyed one, or
// for an owned path a fresh one) owning its task, opened on that
// assistant's grant to act for any customer. A path of neither kind has
// no assistant: the agent is returned twice.
func (b *testBundle) writeActors(path writePath) (who, asst controlplane.Actor, task controlplane.Task, run func() error) {
	b.t.Helper()
	who = b.agent
	if path.keyed {
		who = b.keyedAssistant()
	}
	task, run = path.prepare(b, who)
	asst = who
	if path.owned {
		asst = b.keyedAssistant()
	}
	if path.keyed || path.owned {
		if _, err := b.store.Pool().Exec(b.ctx, `UPDATE tasks SET assistant_id = $2, vouched = 'any_customer' WHERE id = $1`, task.ID, asst.ID); err != nil {
			b.t.Fatal(err)
		}
	}
	return who, asst, task, run
}

// TestAWriteIsCheckedAgainAfterItsDryRun holds every path that records a
// write between its dry run and its transaction, makes each change that
// takes the write's ground away, commits it, lets the write go on and
// checks nothing was recorded — no invocation, no link, no edit, no
// successor — and that the refusal names the change.
func TestAWriteIsCheckedAgainAfterItsDryRun(t *testing.T) {
	t.Parallel()
	for _, path := range writePaths {
		for _, iv := range interventions {
			if (iv.keyed && !path.keyed) || (iv.ofAssistant && !path.keyed && !path.owned) {
				continue
			}
			t.Run(path.name+"/"+iv.name, func(t *testing.T) {
				t.Parallel()
				b, gate := setupGated(t)
				_, asst, task, run := b.writeActors(path)
				stop := gate.arm()
				done := make(chan error, 1)
				go func() { done <- run() }()
				<-stop.reached
				if err := iv.do(b, task, asst); err != nil {
					t.Fatalf("%s: %v", iv.name, err)
				}
				before := b.recorded(task.ID)
				close(stop.release)
				err := <-done
				if e, ok := apperr.As(err); !ok || e.Code != iv.code {
					t.Errorf("the write after %q during its dry run: %v, want refused with %s", iv.name, err, iv.code)
				}
				if after := b.recorded(task.ID); after != before {
					t.Errorf("the write after %q during its dry run was recorded: %s before it went on, %s after", iv.name, before, after)
				}
			})
		}
	}
}

// TestEveryWritePathGoesThroughTheGate: without an intervention each path
// dry-runs through the gate and records its write, so the refusals above
// are the interventions' doing.
func TestEveryWritePathGoesThroughTheGate(t *testing.T) {
	t.Parallel()
	for _, path := range writePaths {
		t.Run(path.name, func(t *testing.T) {
			t.Parallel()
			b, gate := setupGated(t)
			_, _, task, run := b.writeActors(path)
			stop := gate.arm()
			done := make(chan error, 1)
			go func() { done <- run() }()
			<-stop.reached
			before := b.recorded(task.ID)
			close(stop.release)
			if err := <-done; err != nil {
				t.Fatalf("the write with nothing changed: %v", err)
			}
			if after := b.recorded(task.ID); after == before {
				t.Errorf("the write recorded nothing: %s", after)
			}
		})
	}
}
