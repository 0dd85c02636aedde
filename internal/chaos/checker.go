package chaos

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/webhooks"
)

// Finding is one broken invariant.
type Finding struct {
	Rule       string `json:"rule"`
	Invocation string `json:"invocation,omitempty"`
	Task       string `json:"task,omitempty"`
	Detail     string `json:"detail"`
}

// Counts are one round's numbers, as the table prints them.
type Counts struct {
	Proposed   int `json:"proposed"`
	Approved   int `json:"approved"`
	Completed  int `json:"completed"`
	Unverified int `json:"unverified"`
	Reconciled int `json:"reconciled"`
	// Swept are the invocations the consoles' own reconciliation settled
	// (events reconciled "by": "sweep"), before the campaign reconciled
	// the rest; they are not among Unverified.
	Swept      int            `json:"swept"`
	Effects    int            `json:"effects"`
	Faults     map[string]int `json:"faults"`
	Violations int            `json:"violations"`
	// AgentApproved and CustomerConfirmed are the approvals and
	// confirmations the console acknowledged to the driver.
	AgentApproved     int `json:"agent_approved"`
	CustomerConfirmed int `json:"customer_confirmed"`
	// StillUnverified stay unverified after reconciliation, with their
	// evidence; WithEffect of them have an effect in the ledger that the
	// lookup did not establish.
	StillUnverified int `json:"still_unverified"`
	WithEffect      int `json:"still_unverified_with_effect"`
	// Compensated failed after applying a step that the adapter undid under
	// the same key (a cancellation reinstated when its invoice could not
	// be voided): effects in the ledger, none of them lasting.
	Compensated int `json:"compensated,omitempty"`
	// LeaseOvershootMS is the longest a dispatching row was seen past its
	// lease while the load and the faults ran (not a violation: consoles
	// may be down or frozen then).
	LeaseOvershootMS int64 `json:"lease_overshoot_ms"`
	// The wide workload: refunds completed (each with two approvers),
	// originals reversed, outcome events and what the receiver saw of them
	// (requests repeated under their delivery id, events still pending
	// under a lease when the round ended), effects in the warehouse.
	Refunds      int `json:"refunds,omitempty"`
	Reversed     int `json:"reversed,omitempty"`
	HookEvents   int `json:"webhook_events,omitempty"`
	HookRepeated int `json:"webhook_repeated,omitempty"`
	HookLate     int `json:"webhook_late,omitempty"`
	DescribedFx  int `json:"warehouse_effects,omitempty"`
	// Systems are the round's invocations counted per system, so that an
	// authoritative record's unknown outcomes are told apart from
	// another's.
	Systems map[string]*SystemCounts `json:"systems,omitempty"`
	// Notes are what the checker saw that breaks no invariant but a person
	// would look at.
	Notes []string `json:"notes,omitempty"`
}

// SystemCounts are one system's invocations: how many, completed, swept
// (settled by the consoles' own reconciliation; SweptNotApplied of them as
// failed, an authoritative record holding no effect under the key),
// unverified before the campaign reconciled them, Reconciled of those
// settled by the campaign's reconcile, and left unverified for a person
// with and without an effect in the system's record. Authoritative says
// the system's record proves a call not applied (authoritative).
type SystemCounts struct {
	Authoritative   bool `json:"authoritative"`
	Invocations     int  `json:"invocations"`
	Completed       int  `json:"completed"`
	Swept           int  `json:"swept"`
	SweptNotApplied int  `json:"swept_not_applied"`
	Unverified      int  `json:"unverified"`
	Reconciled      int  `json:"reconciled"`
	WithEffect      int  `json:"still_unverified_with_effect"`
	WithoutEffect   int  `json:"still_unverified_without_effect"`
}

// Left is how many of the system's writes stay unverified for a person.
func (s *SystemCounts) Left() int { return s.WithEffect + s.WithoutEffect }

// authoritative says whether a system's record of effects proves a call
// not applied, so that an unverified write without an effect there can
// settle without a person: the demo shop's ledger does (its adapter is
// given SHOP_SETTLE_AFTER), a described system when its file declares
// its effects lookup authoritative.
func authoritative(system string) bool {
	file := map[string][]byte{systemWarehouse: warehouseFile, systemGraphQL: graphqlFile}[system]
	if file == nil {
		return system == systemShop
	}
	var d struct {
		Effects struct {
			Authoritative bool `json:"authoritative"`
		} `json:"effects"`
	}
	return json.Unmarshal(file, &d) == nil && d.Effects.Authoritative
}

// system is the counts of system, made on first use.
func (c *Counts) system(name string) *SystemCounts {
	if c.Systems == nil {
		c.Systems = map[string]*SystemCounts{}
	}
	if c.Systems[name] == nil {
		c.Systems[name] = &SystemCounts{Authoritative: authoritative(name)}
	}
	return c.Systems[name]
}

type journalInvocation struct {
	ID            string
	TaskID        string
	System        string
	TargetID      string
	AmountCents   *int64
	CompensatesID *string
	Action        string
	State         string
	Key           string
	Stage         int16
	Verification  []byte
	Error         []byte
	LeaseUntil    *time.Time
}

type journalEvent struct {
	ID           int64
	At           time.Time
	Data         []byte
	Action       controlplane.EventAction
	ActorKind    string
	ActorID      string
	TaskID       *string
	InvocationID *string
}

// journalDelivery is a webhook delivery as the console keeps it.
type journalDelivery struct {
	ID            int64
	EventID       int64
	InvocationID  string
	State         string
	Attempts      int
	LeaseUntil    *time.Time
	NextAttemptAt time.Time
}

type journalTask struct {
	ID            string
	WriteBudget   int
	WritesUsed    int
	InflightLimit int
}

// journal is what the checker reads: the shop's effect ledger and the
// console's invocations, events and tasks.
type journal struct {
	ledger []demoshop.LedgerEntry
	invs   []journalInvocation
	events []journalEvent
	tasks  []journalTask
	// second is the second system's effect ledger (the warehouse's, or the
	// GraphQL shop's refunds), secondName that system (systemWarehouse
	// when empty).
	second     []demoshop.LedgerEntry
	secondName string
	// secondAbove is the refund policy's second-approver threshold (nil:
	// none, the rule is not checked).
	secondAbove *int64
	// hooks says a receiver was registered; received is what it was
	// sent, deliveries the console's delivery rows, checkedAt when they
	// were read.
	hooks      bool
	received   []received
	deliveries []journalDelivery
	checkedAt  time.Time
}

// acknowledged is what the console acknowledged to the driver.
type acknowledged struct {
	invocations map[string]string   // invocation → "proposed" | "approved" | "confirmed"
	controls    map[string][]string // task → pause, resume, cancel answered 2xx
	reversals   map[string][]string // original → the reversals Reverse answered
	stats       driverStats
}

// check reads the shop's effect ledger and the console's journal and
// reports every broken invariant (evaluate). unverifiedBefore holds the
// invocations that were unverified before the campaign reconciled them.
func check(ctx context.Context, w *world, d *driver, unverifiedBefore map[string]bool, c *Counts) ([]Finding, error) {
	var j journal
	var err error
	if j.ledger, err = readLedger(ctx, w); err != nil {
		return nil, err
	}
	if w.wide {
		if w.second == SecondGraphQL {
			j.secondName = systemGraphQL
			j.second, err = readGQLEffects(ctx, w.gqlURL, w.gql.Token())
		} else {
			j.second, err = readLedgerOf(ctx, w.whURL, w.warehouse.Token())
		}
		if err != nil {
			return nil, err
		}
		j.hooks, j.received = true, w.hooks.received()
		rows, _ := w.pool.Query(ctx, `SELECT id, event_id, invocation_id, state, attempts, lease_until, next_attempt_at FROM webhook_deliveries ORDER BY event_id`)
		if j.deliveries, err = pgx.CollectRows(rows, pgx.RowToStructByName[journalDelivery]); err != nil {
			return nil, err
		}
		j.checkedAt = time.Now()
		if err := w.pool.QueryRow(ctx, `SELECT second_approver_above_cents FROM policies WHERE system = $1 AND action = $2`,
			systemShop, actionRefund).Scan(&j.secondAbove); err != nil {
			return nil, err
		}
	}
	rows, _ := w.pool.Query(ctx, `SELECT id, task_id, system, target_id, amount_cents, compensates_id, action, state,
		idempotency_key AS key, policy_stage AS stage, verification, error, lease_until FROM invocations`)
	if j.invs, err = pgx.CollectRows(rows, pgx.RowToStructByName[journalInvocation]); err != nil {
		return nil, err
	}
	rows, _ = w.pool.Query(ctx, `SELECT id, at, data, action, actor_kind, actor_id, task_id, invocation_id FROM events ORDER BY id`)
	if j.events, err = pgx.CollectRows(rows, pgx.RowToStructByName[journalEvent]); err != nil {
		return nil, err
	}
	rows, _ = w.pool.Query(ctx, `SELECT id, write_budget, writes_used, inflight_limit FROM tasks`)
	if j.tasks, err = pgx.CollectRows(rows, pgx.RowToStructByName[journalTask]); err != nil {
		return nil, err
	}
	d.mu.Lock()
	a := acknowledged{invocations: maps.Clone(d.acked), controls: maps.Clone(d.controls), reversals: maps.Clone(d.reversals), stats: d.stats}
	d.mu.Unlock()
	return evaluate(j, a, unverifiedBefore, c), nil
}

// evaluate checks the invariants on a journal and what was acknowledged.
func evaluate(j journal, ack acknowledged, unverifiedBefore map[string]bool, c *Counts) []Finding {
	var out []Finding
	add := func(rule, inv, task, format string, args ...any) {
		out = append(out, Finding{Rule: rule, Invocation: inv, Task: task, Detail: fmt.Sprintf(format, args...)})
	}
	ledger, invs, events, tasks := j.ledger, j.invs, j.events, j.tasks

	byKey := map[string]*journalInvocation{}
	byID := map[string]*journalInvocation{}
	for i := range invs {
		byKey[invs[i].Key] = &invs[i]
		byID[invs[i].ID] = &invs[i]
	}
	c.Effects = len(ledger) + len(j.second)
	c.DescribedFx = len(j.second)
	secondName := cmp.Or(j.secondName, systemWarehouse)
	// Each effect with the system it was found in: an invocation's effects
	// are in its own system's ledger, never in another's.
	type sysEntry struct {
		system string
		demoshop.LedgerEntry
	}
	var all []sysEntry
	for _, e := range ledger {
		all = append(all, sysEntry{systemShop, e})
	}
	for _, e := range j.second {
		all = append(all, sysEntry{secondName, e})
	}

	// No effect without a journal row and its key; no two effects of one
	// kind on one object for one key.
	effects := map[string]int{}
	// lasting counts, per invocation, the effects its own compensation
	// did not undo: a failed call may leave a step it rolled back (the
	// shop's cancellation whose invoice could not be voided, reinstated
	// under the same key), never one that stands.
	lasting := map[string]int{}
	open := map[string][]demoshop.LedgerEntry{} // key|object → effects not yet undone
	seen := map[string]int64{}
	// The GraphQL shop refunds once per key, whatever the order: a second
	// refund under one key is a duplicate even on another object.
	gqlKeys := map[string]int64{}
	for _, se := range all {
		e := se.LedgerEntry
		inv := byKey[e.RequestID]
		if inv == nil {
			add("effect_without_journal", "", "", "%s ledger entry %d (%s on %s) carries key %q that no invocation has", se.system, e.ID, e.Kind, e.Object, e.RequestID)
			continue
		}
		if sys := cmp.Or(inv.System, systemShop); sys != se.system {
			add("effect_in_other_system", inv.ID, inv.TaskID, "an invocation of %s has an effect in %s's ledger (entry %d, %s on %s)", sys, se.system, e.ID, e.Kind, e.Object)
		}
		effects[inv.ID]++
		lasting[inv.ID]++
		ko := e.RequestID + "|" + e.Object
		if undoes, ok := compensations[e.Kind]; ok {
			for i, prior := range open[ko] {
				if prior.Kind == undoes && undoneWhole(prior) {
					open[ko] = append(open[ko][:i], open[ko][i+1:]...)
					lasting[inv.ID] -= 2
					break
				}
			}
		} else {
			open[ko] = append(open[ko], e)
		}
		k := se.system + "|" + e.RequestID + "|" + e.Kind + "|" + e.Object
		first, dup := seen[k]
		if dup {
			add("duplicate_effect", inv.ID, inv.TaskID, "ledger entries %d and %d: %s on %s twice for one key", first, e.ID, e.Kind, e.Object)
		}
		seen[k] = e.ID
		if se.system == systemGraphQL {
			if other, ok := gqlKeys[e.RequestID]; ok && !dup {
				add("duplicate_effect", inv.ID, inv.TaskID, "%s entries %d and %d: two effects under key %s", se.system, other, e.ID, e.RequestID)
			}
			gqlKeys[e.RequestID] = e.ID
		}
	}

	// Every completed has its effect and its verification; nothing that
	// never went (or was refused) has one.
	for _, inv := range invs {
		sc := c.system(cmp.Or(inv.System, systemShop))
		sc.Invocations++
		if unverifiedBefore[inv.ID] {
			sc.Unverified++
		}
		switch inv.State {
		case "completed":
			c.Completed++
			sc.Completed++
			if effects[inv.ID] == 0 {
				add("completed_without_effect", inv.ID, inv.TaskID, "completed, but the ledger has no effect with key %s", inv.Key)
			}
			if len(inv.Verification) == 0 || string(inv.Verification) == "null" {
				add("completed_without_verification", inv.ID, inv.TaskID, "completed without a verification")
			}
		case "failed":
			if lasting[inv.ID] > 0 {
				add("effect_for_failed", inv.ID, inv.TaskID, "failed, but the ledger has %d effect(s) with key %s that nothing undid", lasting[inv.ID], inv.Key)
			} else if effects[inv.ID] > 0 {
				c.Compensated++
			}
		case "not_dispatched", "rejected", "expired", "proposed", "awaiting_approval", "awaiting_confirmation", "approved":
			if effects[inv.ID] > 0 {
				add("effect_for_"+inv.State, inv.ID, inv.TaskID, "%s, but the ledger has %d effect(s) with key %s", inv.State, effects[inv.ID], inv.Key)
			}
		case "unverified":
			c.StillUnverified++
			if len(inv.Error) == 0 || string(inv.Error) == "null" {
				add("unverified_without_evidence", inv.ID, inv.TaskID, "unverified with no recorded error or evidence")
			}
			if effects[inv.ID] > 0 {
				c.WithEffect++
				sc.WithEffect++
				var kinds []string
				for _, e := range ledger {
					if e.RequestID == inv.Key {
						kinds = append(kinds, e.Kind+" "+e.Object)
					}
				}
				c.Notes = append(c.Notes, fmt.Sprintf("%s (%s) stays unverified with effects %v; its error: %s", inv.ID, inv.Action, kinds, inv.Error))
			} else {
				sc.WithoutEffect++
				// Which system's, and why no look settled it: what a
				// campaign reads to tell an authoritative record's from
				// another's.
				c.Notes = append(c.Notes, fmt.Sprintf("%s (%s of %s) stays unverified without an effect; its error: %s", inv.ID, inv.Action,
					cmp.Or(inv.System, systemShop), inv.Error))
			}
		case "dispatching":
			if inv.LeaseUntil == nil || time.Since(*inv.LeaseUntil) > sweepInterval {
				add("dispatching_past_lease", inv.ID, inv.TaskID, "still dispatching; lease until %v", inv.LeaseUntil)
			}
		}
	}
	for id := range unverifiedBefore {
		if inv := byID[id]; inv != nil && (inv.State == "completed" || inv.State == "failed") {
			c.Reconciled++
			c.system(cmp.Or(inv.System, systemShop)).Reconciled++
		}
	}
	c.Unverified = len(unverifiedBefore)
	for _, e := range events {
		var d struct {
			By string `json:"by"`
			To string `json:"to"`
		}
		if e.Action == controlplane.EventInvocationReconciled && json.Unmarshal(e.Data, &d) == nil && d.By == controlplane.BySweep {
			c.Swept++
			if inv := byID[deref(e.InvocationID)]; inv != nil {
				sc := c.system(cmp.Or(inv.System, systemShop))
				sc.Swept++
				if d.To == "failed" {
					sc.SweptNotApplied++
				}
			}
		}
	}

	// Budgets, in-flight limits, pauses and the global stop, replayed from
	// the audit in id order. A permit and a pause both lock the task row,
	// and a permit holds the stop switch FOR SHARE, so an event inserted
	// after the other committed has the larger id.
	taskByID := map[string]journalTask{}
	for _, t := range tasks {
		taskByID[t.ID] = t
		if t.WritesUsed > t.WriteBudget {
			add("over_budget", "", t.ID, "writes_used %d > write_budget %d", t.WritesUsed, t.WriteBudget)
		}
	}
	permits := map[string]int{}
	inflight := map[string]map[string]bool{}
	taskState := map[string]controlplane.EventAction{}
	approvals := map[string]map[string]bool{}
	permitted, started, givenUp := map[string]bool{}, map[string]bool{}, map[string]bool{}
	stopped := false
	for _, e := range events {
		task, inv := deref(e.TaskID), deref(e.InvocationID)
		switch e.Action {
		case controlplane.EventDispatchStoppedGlobally:
			stopped = true
		case controlplane.EventDispatchResumedGlobally:
			stopped = false
		case controlplane.EventTaskPaused, controlplane.EventTaskCancelled, controlplane.EventTaskClosed, controlplane.EventTaskActive:
			taskState[task] = e.Action
		case controlplane.EventInvocationApproved, controlplane.EventInvocationConfirmed:
			if approvals[inv] == nil {
				approvals[inv] = map[string]bool{}
			}
			approvals[inv][string(e.Action)+" by "+e.ActorKind] = true
		case controlplane.EventPermitGranted:
			if j := byID[inv]; j != nil {
				approved, confirmed := string(controlplane.EventInvocationApproved), string(controlplane.EventInvocationConfirmed)
				want := map[int16]string{3: approved + " by user", 4: confirmed + " by customer", 5: approved + " by policy"}[j.Stage]
				if !approvals[inv][want] {
					add("permit_without_approval", inv, task, "permit.granted (event %d) with no earlier %s", e.ID, want)
				}
			}
			if stopped {
				add("permit_after_global_stop", inv, task, "permit.granted (event %d) while the global stop was on", e.ID)
			}
			if st := taskState[task]; st == controlplane.EventTaskPaused || st == controlplane.EventTaskCancelled || st == controlplane.EventTaskClosed {
				add("permit_after_"+string(st[5:]), inv, task, "permit.granted (event %d) after %s", e.ID, st)
			}
			permits[task]++
			permitted[inv] = true
			if t, ok := taskByID[task]; ok && permits[task] > t.WriteBudget {
				add("permit_over_budget", inv, task, "permit %d of a budget of %d", permits[task], t.WriteBudget)
			}
			if inflight[task] == nil {
				inflight[task] = map[string]bool{}
			}
			inflight[task][inv] = true
			if t, ok := taskByID[task]; ok && len(inflight[task]) > t.InflightLimit {
				add("over_inflight_limit", inv, task, "%d in flight at event %d, limit %d", len(inflight[task]), e.ID, t.InflightLimit)
			}
		case controlplane.EventDispatchStarted:
			// One request per invocation, only under a permit, and never
			// after the invocation was given up as unverified.
			switch {
			case started[inv]:
				add("sent_twice", inv, task, "a second dispatch.started (event %d)", e.ID)
			case !permitted[inv]:
				add("sent_without_permit", inv, task, "dispatch.started (event %d) with no permit before it", e.ID)
			case givenUp[inv]:
				add("sent_after_lease_lost", inv, task, "dispatch.started (event %d) after the invocation was made unverified", e.ID)
			}
			started[inv] = true
		case controlplane.EventInvocationCompleted, controlplane.EventInvocationFailed, controlplane.EventInvocationUnverified, controlplane.EventInvocationNotDispatched:
			if e.Action == controlplane.EventInvocationUnverified {
				givenUp[inv] = true
				var data struct {
					LeaseUntil *time.Time `json:"lease_until"`
				}
				// The sweep names the lease it found run out.
				if json.Unmarshal(e.Data, &data) == nil && data.LeaseUntil != nil && e.At.Before(*data.LeaseUntil) {
					add("swept_before_lease_end", inv, task, "made unverified at %s, its lease ran until %s",
						e.At.Format(time.RFC3339Nano), data.LeaseUntil.Format(time.RFC3339Nano))
				}
			}
			if inflight[task] != nil {
				delete(inflight[task], inv)
			}
		}
	}

	// Every effect left under a lease its worker restarted just before
	// sending (dispatch.started): a send that skipped that check has none.
	for id, n := range effects {
		if n > 0 && !started[id] {
			add("effect_without_send", id, byID[id].TaskID, "%d effect(s) in the ledger, no dispatch.started in the journal", n)
		}
	}

	// Every acknowledged proposal, approval and confirmation survived.
	confirmed, approvedBy, firstBy := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, e := range events {
		switch {
		case e.Action == controlplane.EventInvocationFirstApproval && e.ActorKind == "user":
			firstBy[deref(e.InvocationID)] = true
		case e.Action == controlplane.EventInvocationConfirmed:
			confirmed[deref(e.InvocationID)] = true
		case e.Action == controlplane.EventInvocationApproved && e.ActorKind == "user":
			approvedBy[deref(e.InvocationID)] = true
		}
	}
	for id, what := range ack.invocations {
		switch {
		case byID[id] == nil:
			add("acknowledged_proposal_lost", id, "", "the assistant got 2xx for %s, the journal has no such invocation", id)
		case what == "approved" && !approvedBy[id]:
			add("acknowledged_approval_lost", id, byID[id].TaskID, "the agent got 303, the journal has no approval by a user")
		case what == "first_approved" && !firstBy[id]:
			add("acknowledged_first_approval_lost", id, byID[id].TaskID, "the agent's first approval was acknowledged, the journal has no invocation.first_approval")
		case what == "confirmed" && !confirmed[id]:
			add("acknowledged_confirmation_lost", id, byID[id].TaskID, "the customer's confirmation was acknowledged, the journal has no invocation.confirmed")
		}
	}
	taskEvents := map[string]map[controlplane.EventAction]bool{}
	for _, e := range events {
		if t := deref(e.TaskID); t != "" {
			if taskEvents[t] == nil {
				taskEvents[t] = map[controlplane.EventAction]bool{}
			}
			taskEvents[t][e.Action] = true
		}
	}
	verbEvent := map[string]controlplane.EventAction{"pause": controlplane.EventTaskPaused, "resume": controlplane.EventTaskActive, "cancel": controlplane.EventTaskCancelled}
	for task, verbs := range ack.controls {
		for _, v := range verbs {
			if !taskEvents[task][verbEvent[v]] {
				add("acknowledged_"+v+"_lost", "", task, "the assistant's %s was answered 2xx, the journal has no %s", v, verbEvent[v])
			}
		}
	}
	out = append(out, evaluateWide(j, ack, byID, byKey, c)...)
	c.Proposed = ack.stats.Proposed
	c.AgentApproved, c.CustomerConfirmed = ack.stats.Approved, ack.stats.Confirmed
	for _, e := range events {
		if e.Action == controlplane.EventInvocationApproved || e.Action == controlplane.EventInvocationConfirmed {
			c.Approved++
		}
	}
	c.Violations = len(out)
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func readLedger(ctx context.Context, w *world) ([]demoshop.LedgerEntry, error) {
	return readLedgerOf(ctx, w.shopURL, w.shop.Token())
}

// readLedgerOf reads a demo shop's whole effect ledger.
func readLedgerOf(ctx context.Context, base, token string) ([]demoshop.LedgerEntry, error) {
	var all []demoshop.LedgerEntry
	after := int64(0)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/_ledger?after_id=%d", base, after), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			return nil, err
		}
		var page []demoshop.LedgerEntry
		err = json.NewDecoder(res.Body).Decode(&page)
		res.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read ledger: %w", err)
		}
		if len(page) == 0 {
			return all, nil
		}
		all = append(all, page...)
		after = page[len(page)-1].ID
	}
}

// compensations maps an effect that undoes another to the kind it undoes,
// on the same object and under the same key.
var compensations = map[string]string{
	demoshop.KindSubscriptionReinstated: demoshop.KindSubscriptionCancelled,
}

// undoneWhole reports whether compensating e restores everything e did:
// reinstating a subscription does not return a balance its immediate
// cancellation charged.
func undoneWhole(e demoshop.LedgerEntry) bool {
	var d struct {
		Charged int64 `json:"charged_cents"`
	}
	_ = json.Unmarshal(e.Data, &d)
	return d.Charged == 0
}

// evaluateWide checks the wide workload's invariants: refunds above the
// second-approver threshold sent only with two different approvers and
// refunded at most once; an original reversed at most once, its reversal's
// effect in the ledger at most once; every outcome event delivered to the
// receiver, and under one delivery id.
func evaluateWide(j journal, ack acknowledged, byID, byKey map[string]*journalInvocation, c *Counts) []Finding {
	var out []Finding
	add := func(rule, inv, task, format string, args ...any) {
		out = append(out, Finding{Rule: rule, Invocation: inv, Task: task, Detail: fmt.Sprintf(format, args...)})
	}

	// Two different people approved every refund above the threshold
	// before its permit: the first approval and the approval are the
	// audit's, each with the user who gave it.
	approvers := map[string][]string{}
	for _, e := range j.events {
		inv := deref(e.InvocationID)
		ji := byID[inv]
		if ji == nil || ji.Action != actionRefund {
			continue
		}
		switch e.Action {
		case controlplane.EventInvocationFirstApproval, controlplane.EventInvocationApproved:
			if e.ActorKind == "user" && !slices.Contains(approvers[inv], e.ActorID) {
				approvers[inv] = append(approvers[inv], e.ActorID)
			}
		case controlplane.EventPermitGranted:
			if j.secondAbove != nil && ji.AmountCents != nil && *ji.AmountCents > *j.secondAbove && len(approvers[inv]) < 2 {
				add("refund_without_two_approvers", inv, ji.TaskID, "permit.granted (event %d) for a refund of %d cents (threshold %d) approved by %d person(s) %v",
					e.ID, *ji.AmountCents, *j.secondAbove, len(approvers[inv]), approvers[inv])
			}
		}
	}
	refunds := map[string][]int64{} // order → refund.created entries
	reinstated := map[string][]int64{}
	for _, e := range j.ledger {
		switch e.Kind {
		case demoshop.KindRefundCreated:
			refunds[e.Object] = append(refunds[e.Object], e.ID)
		case demoshop.KindSubscriptionReinstated:
			// A reversal's effect, under the key of a compensation (the
			// adapter's own undo of a failed cancellation is under the
			// cancellation's key).
			if inv := byKey[e.RequestID]; inv != nil && inv.CompensatesID != nil {
				reinstated[*inv.CompensatesID] = append(reinstated[*inv.CompensatesID], e.ID)
			}
		}
	}
	for order, ids := range refunds {
		if len(ids) > 1 {
			add("refunded_twice", "", "", "order %s has %d refunds in the ledger (entries %v)", order, len(ids), ids)
		}
	}
	for _, inv := range j.invs {
		if inv.Action == actionRefund && inv.State == "completed" {
			c.Refunds++
		}
	}

	// An original is reversed at most once: one completed compensation,
	// one invocation.reversed, one reinstatement in the ledger.
	completedComps, live := map[string][]string{}, map[string][]string{}
	for _, inv := range j.invs {
		if inv.CompensatesID == nil {
			continue
		}
		orig := *inv.CompensatesID
		switch inv.State {
		case "completed":
			completedComps[orig] = append(completedComps[orig], inv.ID)
			live[orig] = append(live[orig], inv.ID)
		case "failed", "rejected", "expired", "not_dispatched":
		default:
			live[orig] = append(live[orig], inv.ID)
		}
	}
	reversedEvents := map[string]int{}
	for _, e := range j.events {
		if e.Action == controlplane.EventInvocationReversed {
			reversedEvents[deref(e.InvocationID)]++
		}
	}
	for orig, comps := range completedComps {
		if len(comps) > 1 {
			add("reversed_twice", orig, byID[orig].TaskID, "%d completed reversals: %v", len(comps), comps)
		}
	}
	for orig, comps := range live {
		if len(comps) > 1 {
			add("two_live_reversals", orig, byID[orig].TaskID, "%d reversals neither refused nor failed at once: %v", len(comps), comps)
		}
	}
	for orig, n := range reversedEvents {
		if n > 1 {
			add("reversed_twice", orig, "", "%d invocation.reversed events", n)
		}
		c.Reversed++
	}
	for orig, ids := range reinstated {
		if len(ids) > 1 {
			add("reversal_effect_twice", orig, "", "the reversal's effect is in the ledger %d times (entries %v)", len(ids), ids)
		}
	}
	for orig, comps := range ack.reversals {
		if len(comps) > 1 {
			// Reverse answers the live reversal again; another one is
			// fine only once the first was refused or failed.
			for _, id := range comps[:len(comps)-1] {
				if inv := byID[id]; inv != nil && slices.Contains(live[orig], id) {
					add("reversal_not_deduplicated", orig, inv.TaskID, "Reverse answered %v, while %s was live", comps, id)
					break
				}
			}
		}
	}

	if !j.hooks {
		return out
	}
	// Every outcome event reaches the receiver, each under one delivery
	// id however often it is sent.
	// A delivery claimed by a console that was killed or frozen with it is
	// sent when that claim runs out, and so, after it, are the later
	// deliveries of its invocation (they go in order): late, not lost.
	delivery := map[int64]journalDelivery{}
	for _, d := range j.deliveries {
		delivery[d.EventID] = d
	}
	late := lateDeliveries(j.deliveries, j.checkedAt)
	took, ids := map[int64]bool{}, map[int64][]string{}
	for _, r := range j.received {
		if r.BadSignature {
			add("webhook_bad_signature", "", "", "delivery %s of event %d: the signature does not verify", r.Delivery, r.EventID)
		}
		if r.Status/100 == 2 {
			if took[r.EventID] {
				c.HookRepeated++
			}
			took[r.EventID] = true
		}
		if !slices.Contains(ids[r.EventID], r.Delivery) {
			ids[r.EventID] = append(ids[r.EventID], r.Delivery)
		}
	}
	for ev, d := range ids {
		if len(d) > 1 {
			add("webhook_two_delivery_ids", "", "", "event %d reached the receiver under delivery ids %v", ev, d)
		}
	}
	for _, e := range j.events {
		if e.InvocationID == nil || !slices.Contains(webhooks.Outcomes, e.Action) {
			continue
		}
		c.HookEvents++
		if took[e.ID] {
			continue
		}
		d, ok := delivery[e.ID]
		switch {
		case !ok:
			add("webhook_not_delivered", *e.InvocationID, deref(e.TaskID), "%s (event %d) was never enqueued", e.Action, e.ID)
		case late[d.ID] != 0:
			c.HookLate++
			c.Notes = append(c.Notes, fmt.Sprintf("delivery %d of %s (event %d) is late: delivery %d of its invocation is claimed", d.ID, e.Action, e.ID, late[d.ID]))
		default:
			add("webhook_not_delivered", *e.InvocationID, deref(e.TaskID), "%s (event %d): delivery %d is %s after %d attempt(s), next at %s, claimed until %v; the receiver never took it (requests under its id: %d)",
				e.Action, e.ID, d.ID, d.State, d.Attempts, d.NextAttemptAt.Format("15:04:05.000"), d.LeaseUntil, len(ids[e.ID]))
		}
	}
	return out
}

// lateDeliveries maps each delivery that is late at `at` to the claimed one
// it waits for: a delivery claimed by a console that was killed or frozen
// with it is sent when that claim runs out, and so, after it, are the later
// deliveries of its invocation (they go in event order). ds is in event
// order.
func lateDeliveries(ds []journalDelivery, at time.Time) map[int64]int64 {
	claimed := map[string]int64{} // invocation → its delivery held by a claim
	late := map[int64]int64{}
	for _, d := range ds {
		if d.State != "pending" {
			continue
		}
		if first, ok := claimed[d.InvocationID]; ok {
			late[d.ID] = first
		} else if d.LeaseUntil != nil && d.LeaseUntil.After(at) {
			claimed[d.InvocationID], late[d.ID] = d.ID, d.ID
		}
	}
	return late
}
