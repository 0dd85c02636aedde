package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Action is one thing the driver did and the answer it got, for the
// round's history.
type Action struct {
	AtMS       int64  `json:"at_ms"`
	Actor      string `json:"actor"`
	Op         string `json:"op"`
	Console    int    `json:"console"`
	Status     int    `json:"status"`
	Task       string `json:"task,omitempty"`
	Invocation string `json:"invocation,omitempty"`
	State      string `json:"state,omitempty"`
	Error      string `json:"error,omitempty"`
}

// driver plays the assistant, the agent, the customers and the admin
// against the round's consoles.
type driver struct {
	w      *world
	seed   uint64
	start  time.Time
	api    *apiClient
	agent  *webClient
	agent2 *webClient
	admin  *webClient
	cust   map[string]*webClient
	toDo   chan pending // awaiting an agent or a customer
	mu     sync.Mutex
	log    []Action
	tasks  []string
	acked  map[string]string // invocation → "approved" | "first_approved" | "confirmed" | "proposed"
	paused map[string]bool   // tasks the assistant paused (acknowledged)
	// controls are the acknowledged task controls: task → verbs answered 2xx.
	controls map[string][]string
	// reversals are the compensations Reverse answered: original → the
	// compensation ids it was answered with.
	reversals map[string][]string
	reverse   sync.WaitGroup // the reversers still waiting on their originals
	stats     driverStats
}

// pending is a proposal waiting for a person: an agent's approval
// (approve), two different agents' (refund), the second agent's (reversal,
// since the first approved what it reverses) or the customer's (confirm).
type pending struct {
	id, customer string
	kind         string
}

// The kinds of pending work.
const (
	pendApprove  = "approve"
	pendRefund   = "refund"
	pendReversal = "reversal"
	pendConfirm  = "confirm"
)

type driverStats struct {
	Proposed, Approved, Confirmed int
	// FirstApproved counts refunds whose first approval was acknowledged;
	// Reversals the reversals Reverse answered (a repeated one once).
	FirstApproved, Reversals int
}

func newDriver(w *world, seed uint64) *driver {
	d := &driver{w: w, seed: seed, start: time.Now(), api: newAPIClient(w.apiKey), agent: newWebClient(w.agent),
		agent2: newWebClient(w.agent2), admin: newWebClient(w.admin), cust: map[string]*webClient{}, toDo: make(chan pending, 10000),
		acked: map[string]string{}, paused: map[string]bool{}, controls: map[string][]string{}, reversals: map[string][]string{}}
	for _, c := range w.customers {
		d.cust[c] = newWebClient(c)
	}
	return d
}

func (d *driver) record(a Action) {
	a.AtMS = time.Since(d.start).Milliseconds()
	d.mu.Lock()
	d.log = append(d.log, a)
	d.mu.Unlock()
}

// run drives the workload until ctx ends.
func (d *driver) run(ctx context.Context, assistants int) {
	var wg sync.WaitGroup
	for i := range assistants {
		wg.Go(func() { d.assistant(ctx, i) })
	}
	wg.Go(func() { d.people(ctx) })
	wg.Wait()
	d.reverse.Wait()
}

// taskFor is one task the assistant proposes into, replaced when its
// proposals outgrow its budget (a few more than the budget, so the budget
// is tested).
type taskFor struct {
	id        string
	proposals int
	budget    int
}

func (d *driver) assistant(ctx context.Context, n int) {
	rnd := rand.New(rand.NewPCG(d.seed, uint64(n)+1))
	tasks := map[string]*taskFor{}
	for ctx.Err() == nil {
		// Of twenty: 13 product descriptions in the shop, and in a wide
		// round 2 in the warehouse or refunds in the GraphQL shop (else
		// the shop's descriptions too), 2 cancellations,
		// 2 address changes, 1 refund (an address change without the
		// warehouse).
		kind := rnd.IntN(20)
		customer, system, action := d.w.operator, systemShop, actionAuto
		switch {
		case kind < 13:
		case kind < 15:
			switch {
			case d.w.wide && d.w.second == SecondGraphQL:
				system, action = systemGraphQL, actionGQLRefund
			case d.w.wide:
				system = systemWarehouse
			}
		case kind < 17:
			customer, action = d.w.customers[rnd.IntN(len(d.w.customers))], actionApprove
		case kind < 19 || !d.w.wide:
			customer, action = d.w.customers[rnd.IntN(len(d.w.customers))], actionConfirm
		default:
			customer, action = d.w.customers[rnd.IntN(len(d.w.customers))], actionRefund
		}
		t := tasks[customer]
		if t == nil || t.proposals >= t.budget+3 {
			t = d.createTask(ctx, rnd, customer)
			if t == nil {
				sleep(ctx, time.Second)
				continue
			}
			tasks[customer] = t
		}
		args, err := d.args(ctx, rnd, system, action, customer)
		if err != nil {
			sleep(ctx, 500*time.Millisecond) // the shop's database is restarting
			continue
		}
		if action == actionAuto && rnd.IntN(8) == 0 {
			// Parallel tool calls: a few writes proposed at once in one
			// task, so the in-flight limit (1–3) has something to hold
			// back. Automatic writes leave as they are approved, so only
			// proposals that overlap can exceed it.
			t.proposals += d.burst(ctx, rnd, t.id, system, customer, args)
			sleep(ctx, time.Duration(50+rnd.IntN(150))*time.Millisecond)
			continue
		}
		t.proposals++
		inv, ok := d.propose(ctx, rnd, t.id, system, action, args)
		if ok && (inv.State == "awaiting_approval" || inv.State == "awaiting_confirmation") {
			p := pending{id: inv.ID, customer: customer, kind: pendApprove}
			switch {
			case inv.State == "awaiting_confirmation":
				p.kind = pendConfirm
			case action == actionRefund:
				p.kind = pendRefund
			}
			d.toDo <- p
		}
		sleep(ctx, time.Duration(50+rnd.IntN(150))*time.Millisecond)
	}
}

func (d *driver) createTask(ctx context.Context, rnd *rand.Rand, customer string) *taskFor {
	budget := 15 + rnd.IntN(20)
	actions := []string{systemShop + "/" + actionAuto}
	switch {
	case d.w.wide && d.w.second == SecondGraphQL:
		actions = append(actions, systemGraphQL+"/"+actionGQLRefund)
	case d.w.wide:
		actions = append(actions, systemWarehouse+"/"+actionAuto)
	}
	if customer != d.w.operator {
		actions = []string{actionApprove, actionConfirm}
		if d.w.wide {
			actions = append(actions, actionRefund)
		}
	}
	body := map[string]any{"customer_ref": customer, "conversation_id": fmt.Sprintf("conv-%d", rnd.Uint32()),
		"allowed_actions": actions, "write_budget": budget, "inflight_limit": 1 + rnd.IntN(3),
		"rate_per_minute": 600, "expires_at": time.Now().Add(2 * time.Hour)}
	for attempt := range 3 {
		n := rnd.IntN(len(d.w.consoles))
		var t apiTask
		status, err := d.api.do(ctx, d.w.console(n).URL(), http.MethodPost, "/tasks", body, "", &t)
		d.record(Action{Actor: "assistant", Op: "create_task", Console: n + 1, Status: status, Task: t.ID, Error: errText(err)})
		if err == nil {
			d.mu.Lock()
			d.tasks = append(d.tasks, t.ID)
			d.mu.Unlock()
			return &taskFor{id: t.ID, budget: budget}
		}
		sleep(ctx, time.Duration(attempt+1)*300*time.Millisecond)
	}
	return nil
}

func (d *driver) args(ctx context.Context, rnd *rand.Rand, system, action, customer string) (map[string]any, error) {
	switch action {
	case actionGQLRefund:
		return map[string]any{"order_id": d.w.newGQLOrder(), "amount_cents": 100 + rnd.IntN(9900), "reason": "damaged"}, nil
	case actionAuto:
		newProduct := d.w.newProduct
		if system == systemWarehouse {
			newProduct = d.w.newWarehouseProduct
		}
		id, err := newProduct(ctx)
		return map[string]any{"product_id": id, "description": fmt.Sprintf("Edition %d.", rnd.Uint32())}, err
	case actionApprove:
		id, err := d.w.newSubscription(ctx, customer)
		return map[string]any{"subscription_id": id, "reason_code": "too_expensive", "effective": "end_of_period"}, err
	case actionRefund:
		id, err := d.w.newRefundable(ctx, customer)
		return map[string]any{"order_id": id, "amount_cents": secondApproverAbove + 1 + rnd.IntN(8000), "reason_code": "wrong_item"}, err
	default:
		id, err := d.w.newOrder(ctx, customer)
		return map[string]any{"order_id": id, "address": map[string]any{"name": "Sam Rivera", "line1": "1 Harbour Road",
			"city": "Springfield", "postal_code": strconv.Itoa(10000 + rnd.IntN(89999)), "country": "US"}}, err
	}
}

// propose sends one proposal, retrying with the same Idempotency-Key on
// another console when no answer came: the key makes the retry safe.
// burst proposes 2–4 automatic writes at once in one task (first the
// given arguments, then others drawn for the same customer), each from a
// goroutine of its own with its own random source, and returns how many
// it proposed.
func (d *driver) burst(ctx context.Context, rnd *rand.Rand, taskID, system, customer string, first map[string]any) int {
	all := []map[string]any{first}
	for range 1 + rnd.IntN(3) {
		args, err := d.args(ctx, rnd, system, actionAuto, customer)
		if err != nil {
			break
		}
		all = append(all, args)
	}
	var wg sync.WaitGroup
	for _, args := range all {
		own := rand.New(rand.NewPCG(rnd.Uint64(), rnd.Uint64()))
		wg.Go(func() { d.propose(ctx, own, taskID, system, actionAuto, args) })
	}
	wg.Wait()
	return len(all)
}

func (d *driver) propose(ctx context.Context, rnd *rand.Rand, taskID, system, action string, args map[string]any) (apiInvocation, bool) {
	key := fmt.Sprintf("chaos-%016x", rnd.Uint64())
	body := map[string]any{"system": system, "action": action, "args": args, "summary": "Chaos campaign proposal."}
	for attempt := range 4 {
		n := rnd.IntN(len(d.w.consoles))
		var inv apiInvocation
		status, err := d.api.do(ctx, d.w.console(n).URL(), http.MethodPost, "/tasks/"+taskID+"/invocations", body, key, &inv)
		d.record(Action{Actor: "assistant", Op: "propose", Console: n + 1, Status: status, Task: taskID,
			Invocation: inv.ID, State: inv.State, Error: errText(err)})
		if err == nil {
			d.mu.Lock()
			if _, seen := d.acked[inv.ID]; !seen {
				d.stats.Proposed++
				d.acked[inv.ID] = "proposed"
			}
			d.mu.Unlock()
			return inv, true
		}
		if status != 0 && status < 500 && status != http.StatusTooManyRequests && status != http.StatusConflict {
			return inv, false // refused for a reason: budget, block, validation
		}
		sleep(ctx, time.Duration(attempt+1)*300*time.Millisecond)
	}
	return apiInvocation{}, false
}

// people approves and confirms what the assistant proposed, as the agent
// and the customers would, through the console's pages.
func (d *driver) people(ctx context.Context) {
	rnd := rand.New(rand.NewPCG(d.seed, 1000))
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-d.toDo:
			// A person takes a moment; the work waits meanwhile.
			sleep(ctx, time.Duration(rnd.IntN(300))*time.Millisecond)
			if ctx.Err() != nil {
				return
			}
			switch p.kind {
			case pendConfirm:
				d.confirm(ctx, rnd, p)
			case pendReversal:
				d.approve(ctx, rnd, d.agent2, p, false)
			case pendRefund:
				// Two different agents: the first approval leaves it
				// awaiting approval, the second sends it.
				if d.approve(ctx, rnd, d.agent, p, true) == "awaiting_approval" {
					sleep(ctx, time.Duration(rnd.IntN(300))*time.Millisecond)
					d.approve(ctx, rnd, d.agent2, p, false)
				}
			default:
				if d.approve(ctx, rnd, d.agent, p, true) != "" && p.kind == pendApprove && d.w.wide && rnd.IntN(2) == 0 {
					// Half the approved cancellations are reversed once done.
					seed := rnd.Uint64()
					d.reverse.Go(func() { d.reverseWhenDone(ctx, seed, p.id) })
				}
			}
		}
	}
}

// approve opens the card as agent and approves it (or, when mayReject,
// rejects one in ten). It returns the state the console reports after an
// acknowledged approval ("" when none was acknowledged): awaiting_approval
// after the first of two approvals.
func (d *driver) approve(ctx context.Context, rnd *rand.Rand, agent *webClient, p pending, mayReject bool) string {
	who := "agent"
	if agent == d.agent2 {
		who = "agent2"
	}
	for attempt := range 3 {
		n := rnd.IntN(len(d.w.consoles))
		base := d.w.console(n).URL()
		status, page, err := agent.get(ctx, base, "/queue/"+p.id)
		if err == nil && status == http.StatusSeeOther {
			if err = agent.signIn(ctx, base); err == nil {
				status, page, err = agent.get(ctx, base, "/queue/"+p.id)
			}
		}
		if err != nil || status != http.StatusOK {
			d.record(Action{Actor: who, Op: "open_card", Console: n + 1, Status: status, Invocation: p.id, Error: errText(err)})
			sleep(ctx, time.Duration(attempt+1)*400*time.Millisecond)
			continue
		}
		hash := field(page, "args_hash")
		if hash == "" {
			d.record(Action{Actor: who, Op: "open_card", Console: n + 1, Status: status, Invocation: p.id, Error: "not decidable"})
			return ""
		}
		op, form := "approve", url.Values{"_csrf": {field(page, "_csrf")}, "expected_version": {field(page, "expected_version")}, "args_hash": {hash}}
		if mayReject && rnd.IntN(10) == 0 {
			op = "reject"
			form = url.Values{"_csrf": {field(page, "_csrf")}, "expected_version": {field(page, "expected_version")}, "reason": {"other"}, "other": {"Chaos says no."}}
		}
		status, loc, err := agent.post(ctx, base, "/queue/"+p.id+"/"+op, form)
		act := Action{Actor: who, Op: op, Console: n + 1, Status: status, Invocation: p.id, Error: errText(err)}
		// A recorded decision sends the agent to the queue, which shows the
		// decided card (/queue?decided=<id>).
		if err == nil && status == http.StatusSeeOther && loc == "/queue?decided="+url.QueryEscape(p.id) {
			if op != "approve" {
				d.record(act)
				return ""
			}
			// The first of two approvals is answered alike: the state
			// tells which it was.
			var inv apiInvocation
			state := "approved"
			if p.kind == pendRefund {
				if _, gerr := d.api.do(ctx, base, http.MethodGet, "/invocations/"+p.id, nil, "", &inv); gerr == nil {
					state = inv.State
				} else {
					state = "unknown"
				}
			}
			act.State = state
			d.record(act)
			d.mu.Lock()
			switch state {
			case "awaiting_approval":
				if d.acked[p.id] != "approved" {
					d.acked[p.id] = "first_approved"
					d.stats.FirstApproved++
				}
			case "unknown":
			default:
				d.acked[p.id] = "approved"
				d.stats.Approved++
			}
			d.mu.Unlock()
			return state
		}
		d.record(act)
		if err == nil {
			return "" // refused: decided meanwhile, or stale
		}
		sleep(ctx, time.Duration(attempt+1)*400*time.Millisecond)
	}
	return ""
}

// reverseWhenDone waits for an approved cancellation to complete and then
// reverses it through the API as the assistant does when the customer
// changes their mind; one in three is asked twice, as a retrying assistant
// would, and must be answered with the same reversal. The reversal waits
// for the second agent (the first approved the cancellation).
func (d *driver) reverseWhenDone(ctx context.Context, seed uint64, id string) {
	rnd := rand.New(rand.NewPCG(seed, 5))
	deadline := time.Now().Add(15 * time.Second)
	for {
		if ctx.Err() != nil || time.Now().After(deadline) {
			return
		}
		var inv apiInvocation
		n := rnd.IntN(len(d.w.consoles))
		if _, err := d.api.do(ctx, d.w.console(n).URL(), http.MethodGet, "/invocations/"+id, nil, "", &inv); err == nil {
			if inv.State == "completed" {
				break
			}
			if inv.State != "approved" && inv.State != "dispatching" && inv.State != "awaiting_approval" {
				return // failed, unverified, rejected: nothing to reverse
			}
		}
		sleep(ctx, 500*time.Millisecond)
	}
	times := 1
	if rnd.IntN(3) == 0 {
		times = 2
	}
	var queued string
	for range times {
		for attempt := range 3 {
			n := rnd.IntN(len(d.w.consoles))
			var comp apiInvocation
			status, err := d.api.do(ctx, d.w.console(n).URL(), http.MethodPost, "/invocations/"+id+"/reverse", map[string]any{}, "", &comp)
			d.record(Action{Actor: "assistant", Op: "reverse", Console: n + 1, Status: status, Invocation: id, State: comp.State,
				Error: errText(err) + strings.TrimSpace(" "+comp.ID)})
			if err == nil {
				d.mu.Lock()
				if !slices.Contains(d.reversals[id], comp.ID) {
					d.reversals[id] = append(d.reversals[id], comp.ID)
					d.stats.Reversals++
				}
				if _, seen := d.acked[comp.ID]; !seen {
					d.acked[comp.ID] = "proposed"
				}
				d.mu.Unlock()
				if comp.State == "awaiting_approval" && comp.ID != queued {
					queued = comp.ID
					d.toDo <- pending{id: comp.ID, kind: pendReversal}
				}
				break
			}
			if status != 0 && status < 500 && status != http.StatusConflict {
				break
			}
			sleep(ctx, time.Duration(attempt+1)*300*time.Millisecond)
		}
	}
}

func (d *driver) confirm(ctx context.Context, rnd *rand.Rand, p pending) {
	c := d.cust[p.customer]
	for attempt := range 3 {
		n := rnd.IntN(len(d.w.consoles))
		base := d.w.console(n).URL()
		status, page, err := c.get(ctx, base, "/requests/"+p.id)
		if err == nil && !strings.Contains(page, "/requests/"+p.id+"/confirm") {
			// Not signed in (or no longer the customer's to confirm): sign in and look again.
			if err = c.signIn(ctx, base); err == nil {
				status, page, err = c.get(ctx, base, "/requests/"+p.id)
			}
		}
		tok := field(page, "_csrf")
		if err != nil || status != http.StatusOK || tok == "" || !strings.Contains(page, "/requests/"+p.id+"/confirm") {
			d.record(Action{Actor: "customer", Op: "open_request", Console: n + 1, Status: status, Invocation: p.id, Error: errText(err)})
			if err == nil && status == http.StatusOK {
				return // nothing to confirm any more
			}
			sleep(ctx, time.Duration(attempt+1)*400*time.Millisecond)
			continue
		}
		op := "confirm"
		if rnd.IntN(10) == 0 {
			op = "decline"
		}
		// The decision names the quote the page showed, as a browser's form does.
		status, _, err = c.post(ctx, base, "/requests/"+p.id+"/"+op, url.Values{"_csrf": {tok},
			"quote_version": {field(page, "quote_version")}, "quote_digest": {field(page, "quote_digest")}})
		act := Action{Actor: "customer", Op: op, Console: n + 1, Status: status, Invocation: p.id, Error: errText(err)}
		if err == nil && status == http.StatusSeeOther && op == "confirm" {
			// The redirect is the same whether or not the confirmation was
			// taken (a paused task shows the request again): the
			// acknowledgement is the state the console reports after it.
			var inv apiInvocation
			if _, gerr := d.api.do(ctx, base, http.MethodGet, "/invocations/"+p.id, nil, "", &inv); gerr == nil {
				act.State = inv.State
				switch inv.State {
				case "approved", "dispatching", "completed", "unverified", "failed", "not_dispatched":
					d.mu.Lock()
					d.acked[p.id] = "confirmed"
					d.stats.Confirmed++
					d.mu.Unlock()
				}
			}
		}
		d.record(act)
		if err == nil {
			return
		}
		sleep(ctx, time.Duration(attempt+1)*400*time.Millisecond)
	}
}

func (d *driver) randomTask(rnd *rand.Rand) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.tasks) == 0 {
		return ""
	}
	// Recent tasks are the ones with work in flight.
	from := max(0, len(d.tasks)-8)
	return d.tasks[from+rnd.IntN(len(d.tasks)-from)]
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
