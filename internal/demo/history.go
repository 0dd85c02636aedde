package demo

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"strconv"
	"time"

	"countersign/internal/controlplane"
	"countersign/store"
)

// HistoryLoader is what loading history needs of the store (*store.Store
// has it): whether a load or its assistant is already there, and COPY.
type HistoryLoader interface {
	Task(ctx context.Context, id string) (store.Task, error)
	Assistant(ctx context.Context, id string) (store.Assistant, error)
	BulkLoad(ctx context.Context, tables ...store.BulkRows) error
	ResolveLoadedHandoffs(ctx context.Context, conversationPrefix string, userID int64, note string, now time.Time) error
}

// seedHistory gives the demo 40 days of settled history (3,000
// invocations, 800 conversations) so that the metrics pages show something
// to read; it loads once.
func seedHistory(ctx context.Context, h HistoryLoader, agent int64) error {
	return LoadHistory(ctx, h, HistorySpec{Prefix: "demo_h", Invocations: 3000, Conversations: 800, Days: 40,
		End: time.Now(), AssistantID: "asst_demo_history", Finished: true, HandoffsResolvedBy: agent})
}

// HistorySpec says how much synthetic history LoadHistory loads.
type HistorySpec struct {
	// Prefix keeps the ids of one load apart from another's.
	Prefix        string
	Invocations   int
	Conversations int
	// Days spreads the history over the days before End.
	Days int
	End  time.Time
	// AssistantID owns the tasks and conversations; it is created if
	// missing, with the grant to have its reports count without a task.
	AssistantID string
	// Finished leaves no invocation open or unverified, so that nothing of
	// the history waits in an agent's queue (for demos).
	Finished bool
	// HandoffsResolvedBy, with Finished, is the person who resolved the
	// history's hand-offs soon after each was made, so that none of them
	// waits on the hand-off list; zero leaves them waiting.
	HandoffsResolvedBy int64
}

// The shop's six actions, the stage each is staged at, and what
// conversations are about.
var (
	historyActions = []string{"issue_refund", "cancel_subscription", "reinstate_subscription", "change_shipping_address",
		"update_product_description", "resend_receipt"}
	historyStages = []int16{3, 3, 3, 4, 3, 5}
	intents       = []string{"informational", "diagnostic", "navigational", "transactional_low", "transactional_high",
		"ambiguous", "out_of_scope"}
)

// LoadHistory bulk-loads realistic, deterministic history for the metrics
// pages of the demo, their tests and their benchmark: tasks, invocations
// over the shop's six actions in every final state (each with its
// invocation.proposed event), policy refusals, and conversations with
// their conversation events. As in a console that people look after, only
// the last two days hold invocations still open or unverified; older ones
// were settled. The rows are made here and copied in one transaction
// (store.BulkLoad), so a million load in seconds. A second load with the
// same prefix does nothing.
func LoadHistory(ctx context.Context, st HistoryLoader, h HistorySpec) error {
	if h.Days < 1 || h.Prefix == "" || h.AssistantID == "" {
		return fmt.Errorf("demo.LoadHistory: a prefix, an assistant and at least one day are required")
	}
	if _, err := st.Task(ctx, h.Prefix+"t0"); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("demo.LoadHistory: %w", err)
	}
	var tables []store.BulkRows
	if _, err := st.Assistant(ctx, h.AssistantID); errors.Is(err, store.ErrNotFound) {
		// The history's conversations open no task (a task is made per ten
		// invocations, not per conversation), so its assistant's reports
		// count by an admin's grant, as an answering assistant's would.
		tables = append(tables, store.BulkRows{Table: "assistants", Columns: []string{"id", "name", "created_at", "reports_without_task"}, N: 1,
			Row: func(int) []any { return []any{h.AssistantID, h.AssistantID, h.End, true} }})
	} else if err != nil {
		return fmt.Errorf("demo.LoadHistory: %w", err)
	}
	g := history{HistorySpec: h, secs: int64(h.Days) * 86400}
	tables = append(tables, g.tasks(), g.invocations(), g.proposedEvents(), g.refusals(), g.conversationEvents())
	if err := st.BulkLoad(ctx, tables...); err != nil {
		return fmt.Errorf("demo.LoadHistory: %w", err)
	}
	if h.Finished && h.HandoffsResolvedBy != 0 {
		if err := st.ResolveLoadedHandoffs(ctx, h.Prefix+"v", h.HandoffsResolvedBy, "Dealt with at the time (demo history).", h.End); err != nil {
			return fmt.Errorf("demo.LoadHistory: %w", err)
		}
	}
	return nil
}

// history makes the rows of one load; every value is a function of the
// row's number, so two loads of one spec are the same.
type history struct {
	HistorySpec
	secs int64 // the span, in seconds
}

func (h history) id(kind string, n int64) string { return h.Prefix + kind + strconv.FormatInt(n, 10) }

// ago is a time spread over the span by a multiplier prime to it.
func (h history) ago(g, prime int64) time.Time {
	return h.End.Add(-time.Duration((g*prime)%h.secs) * time.Second)
}

// tasks: one per ten invocations, closed.
func (h history) tasks() store.BulkRows {
	return store.BulkRows{Table: "tasks", N: int((int64(h.Invocations)-1)/10 + 1),
		Columns: []string{"id", "assistant_id", "customer_ref", "conversation_id", "systems", "allowed_actions", "write_budget",
			"writes_used", "inflight_limit", "rate_per_minute", "expires_at", "state", "created_at", "updated_at"},
		Row: func(i int) []any {
			g := int64(i)
			return []any{h.id("t", g), h.AssistantID, "cust_" + strconv.FormatInt(g%5000, 10), h.id("c", g), []string{"shop"},
				historyActions, int32(100), int32(0), int32(5), int32(60), h.End, "closed", h.ago(g, 7919), h.End}
		}}
}

// invocation is what the other columns of an invocation row follow from.
type invocation struct {
	action   string
	stage    int16
	person   bool // a person decides it (every stage but 5)
	created  time.Time
	state    string
	approved bool
}

func (h history) invocation(g int64) invocation {
	unverified, open := "unverified", "awaiting_approval"
	if h.Finished {
		unverified, open = "failed", "expired"
	}
	recent := (g*7919)%h.secs < 2*86400
	inv := invocation{action: historyActions[g%6], stage: historyStages[g%6], person: g%6 != 5, created: h.ago(g, 7919)}
	switch r := (g * 17) % 100; {
	case r < 86:
		inv.state = "completed"
	case r < 89:
		inv.state = "reversed"
	case r < 92:
		inv.state = "failed"
	case r < 93 && recent:
		inv.state = unverified
	case r < 93:
		inv.state = "failed"
	case r < 95:
		inv.state = "not_dispatched"
	case r < 98:
		inv.state = "rejected"
	case r < 99 || !recent:
		inv.state = "expired"
	default:
		inv.state = open
	}
	switch inv.state {
	case "completed", "reversed", "failed", "unverified", "not_dispatched":
		inv.approved = true
	}
	return inv
}

func (h history) invocations() store.BulkRows {
	return store.BulkRows{Table: "invocations", N: h.Invocations,
		Columns: []string{"id", "task_id", "conversation_id", "system", "action", "target_kind", "target_id", "target_display",
			"state", "proposed_args", "args_hash", "approved_args_hash", "quote", "summary_disagrees", "idempotency_key",
			"amount_cents", "policy_stage", "policy_version", "route_reason", "deadline_at", "approved_at", "finished_at",
			"not_dispatched_reason", "decision_reason", "created_at", "updated_at"},
		Row: func(i int) []any {
			g := int64(i)
			inv := h.invocation(g)
			n := strconv.FormatInt(g, 10)
			hash := md5.Sum([]byte(n))
			var approvedHash, amount, deadline, approvedAt, finished, notDispatched, decision any
			if inv.approved {
				approvedHash = hash[:]
				if inv.person && g%11 == 0 {
					edited := md5.Sum([]byte("edited" + n))
					approvedHash = edited[:]
				}
				wait := time.Duration(0)
				if inv.person {
					wait = time.Duration((g*131)%20000) * time.Second
				}
				approvedAt = inv.created.Add(wait)
			}
			if inv.action == "issue_refund" {
				amount = 500 + (g%40)*250
			}
			if inv.person {
				deadline = inv.created.Add(24 * time.Hour)
			}
			if inv.state != "awaiting_approval" {
				finished = inv.created.Add(time.Hour)
			}
			switch inv.state {
			case "not_dispatched":
				notDispatched = []string{"task paused", "budget spent", "target changed"}[g%3]
			case "rejected":
				decision = []string{"wrong amount", "customer asked for something else", "duplicate"}[g%3]
			}
			updated := inv.created.Add(time.Hour)
			if inv.state == "reversed" {
				updated = inv.created.Add(2 * 24 * time.Hour)
				if g%3 == 0 {
					updated = inv.created.Add(9 * 24 * time.Hour)
				}
			}
			return []any{h.id("i", g), h.id("t", g/10), h.id("c", g/10), "shop", inv.action, "object", "obj_" + n, "Object " + n,
				inv.state, "{}", hash[:], approvedHash, "{}", g%37 == 0, h.id("k", g), amount, inv.stage, int32(1), "",
				deadline, approvedAt, finished, notDispatched, decision, inv.created, updated}
		}}
}

// proposedEvents: each invocation's invocation.proposed, which the
// metrics roll-ups fold in as in production.
func (h history) proposedEvents() store.BulkRows {
	return store.BulkRows{Table: "events", N: h.Invocations,
		Columns: []string{"at", "actor_kind", "actor_id", "action", "task_id", "invocation_id", "data"},
		Row: func(i int) []any {
			g := int64(i)
			return []any{h.ago(g, 7919), "assistant", h.AssistantID, string(controlplane.EventInvocationProposed), h.id("t", g/10), h.id("i", g), "{}"}
		}}
}

// refusals: one policy refusal per 200 invocations, every fourth of them
// blocking the target.
func (h history) refusals() store.BulkRows {
	return store.BulkRows{Table: "events", N: h.Invocations/200 + 1,
		Columns: []string{"at", "actor_kind", "actor_id", "action", "task_id", "data"},
		Row: func(i int) []any {
			g := int64(i)
			action := controlplane.EventProposalRefused
			if g%4 == 0 {
				action = controlplane.EventProposalBlockedAfterRefusal
			}
			return []any{h.ago(g, 104729), "assistant", h.AssistantID, string(action), h.id("t", g), `{"system": "shop", "action": "issue_refund"}`}
		}}
}

// conversationEvents: two per conversation, how it started and how it
// ended, some handed off to a person.
func (h history) conversationEvents() store.BulkRows {
	return store.BulkRows{Table: "conversation_events", N: 2 * h.Conversations,
		Columns: []string{"conversation_id", "assistant_id", "intent", "mode", "at"},
		Row: func(i int) []any {
			g := int64(i / 2)
			proposes := g%7 == 3 || g%7 == 4
			start := h.ago(g, 7907)
			if i%2 == 0 {
				mode := "read_and_answered"
				if proposes {
					mode = "proposed"
				} else if g%9 == 0 {
					mode = "clarified"
				}
				return []any{h.id("v", g), h.AssistantID, intents[g%7], mode, start}
			}
			mode := "resolved"
			if g%5 == 0 || g%7 == 6 {
				mode = "handed_off"
			} else if proposes {
				mode = "executed"
			}
			return []any{h.id("v", g), h.AssistantID, intents[g%7], mode, start.Add(time.Duration(30+(g*37)%7200) * time.Second)}
		}}
}
