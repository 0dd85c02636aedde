package lists_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// recountTasks is what each task needs, counted from every request and
// hand-off as the list did before it kept counters: the oracle the stored
// columns are held to.
const recountTasks = `
WITH inv AS (
	SELECT task_id,
		count(*) FILTER (WHERE state = 'unverified') AS unverified,
		count(*) FILTER (WHERE state = 'awaiting_approval') AS approval,
		count(*) FILTER (WHERE state = 'awaiting_confirmation') AS customer
	FROM invocations GROUP BY task_id
), ho AS (
	SELECT e.task_id, count(DISTINCT (e.conversation_id, e.intent, e.data::text)) AS handoffs FROM conversation_events e
	WHERE e.mode = 'handed_off' AND e.task_id IS NOT NULL
	  AND NOT EXISTS (SELECT 1 FROM handoff_assignments h WHERE h.conversation_event_id = e.id)
	GROUP BY e.task_id
), counted AS (
	SELECT t.id, t.state, coalesce(inv.unverified, 0)::int AS unverified, coalesce(inv.approval, 0)::int AS approval,
		coalesce(inv.customer, 0)::int AS customer, coalesce(ho.handoffs, 0)::int AS handoffs,
		(CASE WHEN coalesce(inv.unverified, 0) > 0 THEN 0
		 WHEN coalesce(inv.approval, 0) > 0 OR coalesce(ho.handoffs, 0) > 0 OR t.state = 'paused' THEN 1
		 WHEN t.state = 'active' THEN 2 ELSE 3 END)::int AS rank
	FROM tasks t LEFT JOIN inv ON inv.task_id = t.id LEFT JOIN ho ON ho.task_id = t.id
)`

// taskCounters are one task's stored and recounted needs.
type taskCounters struct {
	ID                                             string
	Unverified, Approval, Customer, Handoffs, Rank int32
}

// countCell is how many tasks share an action ("" for every task), a state
// and which needs they have: a row of task_list_cells summed over its
// shards, the unit the list's counts are sums of, or its recount.
type countCell struct {
	Action     string `db:"action"`
	State      string `db:"state"`
	Unverified bool   `db:"unverified"`
	Approval   bool   `db:"approval"`
	Handoff    bool   `db:"handoff"`
	Tasks      int64  `db:"tasks"`
}

func (b *testBundle) storedAndRecounted() (stored, recounted []taskCounters, storedCells, recountedCells []countCell) {
	b.t.Helper()
	collect := func(q string) []taskCounters {
		rows, _ := b.store.Pool().Query(b.ctx, q)
		out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (taskCounters, error) {
			var c taskCounters
			err := r.Scan(&c.ID, &c.Unverified, &c.Approval, &c.Customer, &c.Handoffs, &c.Rank)
			return c, err
		})
		if err != nil {
			b.t.Fatal(err)
		}
		return out
	}
	stored = collect(`SELECT id, unverified_count, awaiting_approval_count, awaiting_customer_count, handoffs_waiting, list_rank
		FROM tasks ORDER BY id`)
	recounted = collect(recountTasks + ` SELECT id, unverified, approval, customer, handoffs, rank FROM counted ORDER BY id`)
	rows, _ := b.store.Pool().Query(b.ctx, `
		SELECT action, state, unverified, approval, handoff, sum(tasks)::bigint AS tasks FROM task_list_cells
		GROUP BY action, state, unverified, approval, handoff HAVING sum(tasks) <> 0`)
	storedCells, err := pgx.CollectRows(rows, pgx.RowToStructByName[countCell])
	if err != nil {
		b.t.Fatal(err)
	}
	rows, _ = b.store.Pool().Query(b.ctx, recountTasks+`
		SELECT a.action, c.state, c.unverified > 0 AS unverified, c.approval > 0 AS approval, c.handoffs > 0 AS handoff, count(*) AS tasks
		FROM counted c CROSS JOIN LATERAL (SELECT '' AS action UNION SELECT i.action FROM invocations i WHERE i.task_id = c.id) a
		GROUP BY 1, 2, 3, 4, 5`)
	recountedCells, err = pgx.CollectRows(rows, pgx.RowToStructByName[countCell])
	if err != nil {
		b.t.Fatal(err)
	}
	order := func(x, y countCell) int {
		return cmpStrings(fmt.Sprint(x.Action, x.State, x.Unverified, x.Approval, x.Handoff), fmt.Sprint(y.Action, y.State, y.Unverified, y.Approval, y.Handoff))
	}
	slices.SortFunc(storedCells, order)
	slices.SortFunc(recountedCells, order)
	return stored, recounted, storedCells, recountedCells
}

func cmpStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestTaskListCountersMatchARecount: after a random sequence of what
// happens to tasks (opened, requests proposed, approved and sent, some
// answers lost, rejected, reconciled, tasks paused, resumed and cancelled,
// hand-offs made and taken, cards claimed) through the control plane, the
// counters the list reads (each task's needs and rank, the count cells)
// equal a full recount from the rows.
func TestTaskListCountersMatchARecount(t *testing.T) {
	t.Parallel()
	b := setup(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 7))
	if _, err := b.store.Pool().Exec(b.ctx, `INSERT INTO assistants (id, name, created_at) VALUES ('asst_h', 'Helper', now())`); err != nil {
		t.Fatal(err)
	}
	var tasks []controlplane.Task
	var invs []string
	var handoffs []int64
	pick := func(n int) int { return rnd.IntN(n) }
	ranks := map[int32]int{}
	check := func(step int) {
		t.Helper()
		stored, recounted, storedCells, recountedCells := b.storedAndRecounted()
		for _, s := range stored {
			ranks[s.Rank]++
		}
		if diff := cmp.Diff(recounted, stored); diff != "" {
			t.Fatalf("after step %d, tasks' stored needs differ from a recount (-recount +stored):\n%s", step, diff)
		}
		if diff := cmp.Diff(recountedCells, storedCells); diff != "" {
			t.Fatalf("after step %d, stored count cells differ from a recount (-recount +stored):\n%s", step, diff)
		}
	}
	ops := 0
	// At least 200 changes, and more (up to 800) until the checks have
	// seen four of the list's ranks: a seed's first 200 may reach fewer.
	step := 0
	for ; step < 200 || (len(ranks) < 4 && step < 800); step++ {
		if len(tasks) == 0 || pick(8) == 0 {
			tasks = append(tasks, b.task(fmt.Sprintf("conv-r%d", step)))
			continue
		}
		task := tasks[pick(len(tasks))]
		switch op := pick(9); {
		case op <= 2:
			at := b.clock.Now().AddDate(0, 0, -5)
			o, err := b.shop.CreateOrder(b.ctx, demoshop.OrderFixture{CustomerID: b.customer.ID, DeliveredAt: &at, ShippingCents: 650,
				Items: []demoshop.ItemFixture{{Name: "Walnut lamp", UnitPriceCents: 4200, Quantity: 1}}})
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(map[string]any{"order_id": o.ID, "amount_cents": 1000 + pick(3000), "reason_code": "damaged"})
			if inv, err := b.cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: "issue_refund", Args: raw, Actor: b.assistant}); err == nil {
				invs = append(invs, inv.ID)
				ops++
			}
		case op == 3 || op == 4:
			if len(invs) == 0 {
				continue
			}
			inv, err := b.cp.Invocation(b.ctx, invs[pick(len(invs))])
			if err != nil {
				t.Fatal(err)
			}
			switch inv.State {
			case controlplane.AwaitingApproval:
				if pick(3) == 0 {
					_, err = b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: inv.ID, Verb: controlplane.StaffReject, Version: inv.Version, Reason: controlplane.OtherReason, Other: "not this one"})
				} else if pick(4) == 0 {
					_, err = b.cp.Claim(b.ctx, b.agent, inv.ID)
				} else if err = b.approve(inv); err == nil {
					if pick(2) == 0 {
						if err := b.shop.SetFault(demoshop.FaultRule{Route: "POST /refunds", DropAfterCommit: 1}); err != nil {
							t.Fatal(err)
						}
					}
					_, err = b.cp.Dispatch(b.ctx, inv.ID)
					b.shop.ClearFaults()
				}
			case controlplane.Unverified:
				_, err = b.cp.Reconcile(b.ctx, b.agent, inv.ID)
			}
			if err == nil {
				ops++
			}
		case op == 5:
			if _, err := b.cp.ChangeTask(b.ctx, b.agent, task.ID, controlplane.TaskPause, 0); err == nil {
				ops++
			}
		case op == 6:
			if _, err := b.cp.ChangeTask(b.ctx, b.agent, task.ID, controlplane.TaskResume, 0); err == nil {
				ops++
			}
		case op == 7:
			if pick(3) == 0 {
				if _, err := b.cp.ChangeTask(b.ctx, b.agent, task.ID, controlplane.TaskCancel, 0); err == nil {
					ops++
				}
				continue
			}
			var id int64
			if err := b.store.Pool().QueryRow(b.ctx, `INSERT INTO conversation_events (conversation_id, assistant_id, task_id, intent, mode, at, data)
				VALUES ($1, 'asst_h', $2, 'ambiguous', 'handed_off', $3, $4) RETURNING id`, task.ConversationID, task.ID, b.clock.Now(),
				fmt.Sprintf(`{"summary": "case %d"}`, pick(3))).Scan(&id); err != nil {
				t.Fatal(err)
			}
			handoffs = append(handoffs, id)
			ops++
		default:
			if len(handoffs) == 0 {
				continue
			}
			if _, err := b.ho.Take(b.ctx, b.agent, handoffs[pick(len(handoffs))]); err == nil {
				ops++
			}
		}
		b.clock.Advance(time.Minute)
		if step%10 == 9 {
			check(step)
		}
	}
	check(step)
	t.Logf("%d tasks, %d changes, ranks seen at the checks %v", len(tasks), ops, ranks)
	if len(ranks) < 4 || ops < 80 {
		t.Errorf("the sequence reached ranks %v in %d changes: too little to test the counters", ranks, ops)
	}
}

// approve approves an invocation as the agent and, when its sum asks for a
// second approver (refunds count per customer, and the test's customer
// gathers many), as another agent too.
func (b *testBundle) approve(inv controlplane.Invocation) error {
	b.t.Helper()
	if _, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: inv.ID, Verb: controlplane.StaffApprove, Version: inv.Version, ArgsHash: inv.ArgsHash}); err != nil {
		return err
	}
	inv, err := b.cp.Invocation(b.ctx, inv.ID)
	if err != nil || inv.State != controlplane.AwaitingApproval {
		return err
	}
	_, err = b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.second, InvocationID: inv.ID, Verb: controlplane.StaffApprove, Version: inv.Version, ArgsHash: inv.ArgsHash})
	return err
}
