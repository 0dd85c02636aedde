package console

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/money"
	"countersign/views"
	"countersign/web/kit"
)

// This file turns the system's words into the reader's: codes into
// sentences, cents into money, argument names into labels. Agents read
// these pages; nothing here is shown to them as raw JSON or as an event
// name.

// thousands writes a count with thousands separators: 1234 → "1,234".
func thousands(n int64) string { return money.Count(n) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// humanize turns a code into words: "too_expensive" → "Too expensive".
func humanize(code string) string {
	s := strings.TrimSpace(strings.NewReplacer("_", " ", ".", " ", "-", " ").Replace(code))
	if s == "" {
		return ""
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// actionWords names an action for people: "issue_refund" → "Issue refund".
func actionWords(action string) string {
	if i := strings.LastIndexByte(action, '/'); i >= 0 {
		action = action[i+1:]
	}
	return humanize(action)
}

// intentWords says what the customer wanted, as the assistant judged it.
func intentWords(intent string) string {
	switch intent {
	case "informational", "diagnostic", "navigational", "transactional_low", "transactional_high", "ambiguous", "out_of_scope":
		return say("console.words.intent."+intent, nil)
	}
	return humanize(intent)
}

// argLabel names an argument for people: "amount_cents" → "Amount",
// "order_id" → "Order", "reason_code" → "Reason", "address.city" →
// "Address city".
func argLabel(name string) string {
	name = strings.TrimSuffix(name, "_cents")
	name = strings.TrimSuffix(name, "_code")
	name = strings.TrimSuffix(name, "_id")
	return humanize(name)
}

// argFields shows arguments as labelled fields: amounts in money (in the
// given currency), codes in words, nested objects flattened with their
// parent's label. Anything that is not a JSON object is one field.
func argFields(raw json.RawMessage, currency string) []views.ArgField {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if len(raw) > argMemoMaxBytes {
		return decodeArgFields(raw, currency)
	}
	key := currency + "\x00" + string(raw)
	if got, ok := argMemo.get(key); ok {
		return slices.Clone(got)
	}
	out := decodeArgFields(raw, currency)
	argMemo.put(key, out)
	return slices.Clone(out)
}

// argMemo keeps the fields of arguments already shown: a request's
// arguments never change once stored (an edit is a new version with its
// own), and the queue's first page shows the same 25 cards to every agent
// on every refresh, so decoding and wording them each time was most of a
// card's cost. Bounded: when full it starts over.
var argMemo = newFieldMemo(1024)

// argMemoMaxBytes is the largest arguments the memo keeps (with 1,024
// entries, at most 8 MB held).
const argMemoMaxBytes = 8 << 10

type fieldMemo struct {
	mu  sync.Mutex
	max int
	m   map[string][]views.ArgField
}

func newFieldMemo(limit int) *fieldMemo {
	return &fieldMemo{max: limit, m: make(map[string][]views.ArgField)}
}

func (f *fieldMemo) get(key string) ([]views.ArgField, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.m[key]
	return v, ok
}

func (f *fieldMemo) put(key string, v []views.ArgField) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.m) >= f.max {
		clear(f.m)
	}
	f.m[key] = v
}

// decodeArgFields is argFields without the memo.
func decodeArgFields(raw json.RawMessage, currency string) []views.ArgField {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return []views.ArgField{{Label: say("console.timeline.arg.arguments", nil), Value: string(raw)}}
	}
	var out []views.ArgField
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for _, k := range sortedKeys(m) {
			if sub, ok := m[k].(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			out = append(out, views.ArgField{Key: prefix + k, Label: argLabel(prefix + k), Value: argValueWords(k, m[k], currency)})
		}
	}
	walk("", m)
	return out
}

// argValueWords writes one argument's value: cents as money, enum-like
// codes ("end_of_period") in words, lists joined.
func argValueWords(name string, v any, currency string) string {
	switch x := v.(type) {
	case float64:
		if strings.HasSuffix(name, "_cents") {
			return money.Format(int64(x), currency)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		if strings.HasSuffix(name, "_code") || name == "effective" || name == "reason" {
			return humanize(x)
		}
		return x
	case bool:
		if x {
			return say("console.timeline.arg.yes", nil)
		}
		return say("console.timeline.arg.no", nil)
	case nil:
		return "—"
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, argValueWords(name, e, currency))
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, argLabel(k)+": "+argValueWords(k, x[k], currency))
		}
		return strings.Join(parts, "; ")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// actorWords names who did something: a person by name, the assistant as
// such, the policy with its action, the customer, or Countersign.
func actorWords(e controlplane.Event) string {
	name, _ := e.Data["actor_name"].(string)
	switch e.ActorKind {
	case controlplane.ActorUser:
		if name != "" {
			return name
		}
		return say("console.words.actor.user", nil)
	case controlplane.ActorAssistant:
		if name != "" {
			return say("console.words.actor.assistant_named", locale.Params{"Name": name})
		}
		return say("console.words.actor.assistant", nil)
	case controlplane.ActorCustomer:
		return say("console.words.actor.customer", nil)
	case controlplane.ActorPolicy:
		return say("console.words.actor.policy", nil)
	case controlplane.ActorSystem:
		return say("console.words.actor.system", nil)
	}
	return humanize(string(e.ActorKind))
}

// eventSentence says what an event did, in words, about the request titled
// subject (empty for a task event; "it" when the event before was about the
// same request). It never shows hashes or raw data. Each sentence is one
// console.timeline.* message; one with a reason the event recorded is its
// own message (…_why), so a sentence is never glued around its reason.
func eventSentence(e controlplane.Event, subject string) string {
	str := func(k string) string { s, _ := e.Data[k].(string); return strings.TrimSpace(s) }
	request := say("console.timeline.request_it", nil)
	if subject != "" && subject != "it" {
		request = say("console.timeline.request", locale.Params{"Title": subject})
	}
	// said is the sentence id, or its …_why form when the event recorded
	// a reason, with the request and the reason as parameters.
	said := func(id, why string, p locale.Params) string {
		q := locale.Params{"Request": request}
		for k, v := range p {
			q[k] = v
		}
		if why = strings.TrimSuffix(why, "."); why != "" {
			id += "_why"
			q["Why"] = why
		}
		return say(id, q)
	}
	saidN := func(id string, n int64, p locale.Params) string {
		q := locale.Params{"Request": request}
		for k, v := range p {
			q[k] = v
		}
		return sayN(id, n, q)
	}
	switch e.Action {
	case controlplane.EventTaskCreated:
		return say("console.words.event.task_created", nil)
	case controlplane.EventTaskPaused:
		return say("console.timeline.task_paused", locale.Params{"ReadIn": readIn(e), "NotSent": countClause("console.timeline.clause.not_sent", e.Data["not_dispatched"])})
	case controlplane.EventTaskActive:
		return say("console.words.event.task_resumed", nil)
	case controlplane.EventTaskCancelled:
		return say("console.timeline.task_cancelled", locale.Params{"NotSent": countClause("console.timeline.clause.not_sent", e.Data["not_dispatched"]),
			"Withdrawn": countClause("console.timeline.clause.withdrawn", e.Data[controlplane.DataWithdrawnIDs])})
	case controlplane.EventTaskClosed:
		return say("console.words.event.task_closed", nil)
	case controlplane.EventInvocationProposed:
		return said("console.timeline.proposed", "", nil)
	case controlplane.EventInvocationSummaryDisagreed:
		// The summary is quoted as it was written, its full stop and all.
		if summary := str("summary"); summary != "" {
			return say("console.timeline.summary_disagreed_why", locale.Params{"Why": summary})
		}
		return say("console.timeline.summary_disagreed", nil)
	case controlplane.EventInvocationAwaitingApproval:
		reason := str("reason")
		if strings.HasPrefix(reason, "stage ") {
			reason = "" // recorded before route reasons were sentences: it only named the stage
		}
		return said("console.timeline.awaiting_approval", kit.LowerFirst(reason), nil)
	case controlplane.EventInvocationAwaitingConfirmation:
		return said("console.timeline.awaiting_confirmation", "", nil)
	case controlplane.EventInvocationApproved:
		if e.ActorKind == controlplane.ActorPolicy {
			if owner := str("owner_name"); owner != "" {
				return said("console.timeline.approved_by_policy_owner", "", locale.Params{"Owner": owner})
			}
			return said("console.timeline.approved_by_policy", "", nil)
		}
		if withPasskey(e) {
			return said("console.timeline.approved_with_passkey", "", nil)
		}
		return said("console.timeline.approved", "", nil)
	case controlplane.EventInvocationFirstApproval:
		if withPasskey(e) {
			return said("console.timeline.first_approval_with_passkey", "", nil)
		}
		return said("console.timeline.first_approval", "", nil)
	case controlplane.EventInvocationConfirmed:
		return said("console.timeline.confirmed", "", locale.Params{"ReadIn": readIn(e)})
	case controlplane.EventInvocationDeclined:
		return said("console.timeline.declined", str("reason"), locale.Params{"ReadIn": readIn(e)})
	case controlplane.EventInvocationRejected:
		return said("console.timeline.rejected", str("reason"), nil)
	case controlplane.EventInvocationSentBack:
		q, _ := controlplane.IsQuestion(str("reason"))
		return said("console.timeline.sent_back", q, nil)
	case controlplane.EventInvocationEdited:
		return said("console.timeline.edited", editWords(e), nil)
	case controlplane.EventInvocationExpired:
		return said("console.timeline.expired", "", nil)
	case controlplane.EventPermitGranted:
		// The words a support agent uses: the task's limits let it go.
		return said("console.timeline.permit_granted", "", nil)
	case controlplane.EventDispatchStarted:
		return said("console.timeline.dispatch_started", "", nil)
	case controlplane.EventDispatchWithheld:
		return said("console.timeline.dispatch_withheld", str("reason"), nil)
	case controlplane.EventInvocationCompleted:
		p := locale.Params{"System": systemWords(str("system"))}
		ref, short := str("reference"), str("short_reference")
		switch {
		case ref != "" && short != "" && short != ref:
			p["Reference"], p["Short"] = ref, short
			return said("console.timeline.completed_short_reference", "", p)
		case ref != "":
			p["Reference"] = ref
			return said("console.timeline.completed_reference", "", p)
		}
		return said("console.timeline.completed", "", p)
	case controlplane.EventInvocationFailed:
		return said("console.timeline.failed", str("message"), locale.Params{"System": systemWords(str("system"))})
	case controlplane.EventInvocationUnverified:
		return said("console.timeline.unverified", "", nil)
	case controlplane.EventInvocationNotDispatched:
		if e.Data[controlplane.DataWithdrawn] == true {
			// It waited for a person when its task was cancelled.
			if subject == "it" {
				return say("console.timeline.withdrawn_it", nil)
			}
			return said("console.timeline.withdrawn", "", nil)
		}
		why := notDispatchedWords(controlplane.NotDispatchedReason(str("reason")))
		if subject == "it" {
			return said("console.timeline.not_dispatched_it", why, nil)
		}
		return said("console.timeline.not_dispatched", why, nil)
	case controlplane.EventInvocationReconciled:
		if str(controlplane.DataBy) == controlplane.BySweep {
			// The console's own look, unasked: which look, what it found.
			n, _ := e.Data["attempt"].(float64)
			id := "console.timeline.reconciled_sweep"
			if str("code") == adapter.CodeNotApplied {
				id = "console.timeline.reconciled_sweep_not_applied"
			}
			q := locale.Params{"N": strconv.Itoa(int(n)), "State": stateWords(controlplane.State(str("to")))}
			if ev := strings.TrimSuffix(str("evidence"), "."); ev != "" {
				id += "_evidence"
				q["Evidence"] = ev
			}
			return said(id, "", q)
		}
		return said("console.timeline.reconciled", "", locale.Params{"State": stateWords(controlplane.State(str("to")))})
	case controlplane.EventInvocationReconcileInconclusive:
		if str(controlplane.DataBy) == controlplane.BySweep {
			n, _ := e.Data["attempt"].(float64)
			if le := strings.TrimSuffix(str("lookup_error"), "."); le != "" {
				return saidN("console.timeline.reconcile_inconclusive_sweep_error", int64(n), locale.Params{"Error": le})
			}
			return saidN("console.timeline.reconcile_inconclusive_sweep", int64(n), nil)
		}
		return said("console.timeline.reconcile_inconclusive", "", nil)
	case controlplane.EventInvocationReversed:
		return said("console.timeline.reversed", "", nil)
	case controlplane.EventInvocationSuperseded:
		return said("console.timeline.superseded", str("reason"), nil)
	case controlplane.EventInvocationRequoted:
		return said("console.timeline.requoted", "", nil)
	case controlplane.EventInvocationRerouted:
		return said("console.timeline.rerouted", str("why"), nil)
	case controlplane.EventProposalRefused, controlplane.EventProposalBlockedAfterRefusal:
		return refusalWords(e)
	case controlplane.EventTargetUnblocked:
		return said("console.timeline.target_unblocked", str("reason"), locale.Params{"Target": str("target_id")})
	case controlplane.EventHandoffTaken:
		return say("console.words.event.handoff_taken", nil)
	case controlplane.EventHandoffTakenOver:
		return said("console.timeline.handoff_taken_over", str("reason"), locale.Params{"From": str("from")})
	case controlplane.EventHandoffDraftSent:
		if subject == "" {
			return say("console.timeline.handoff_draft_sent", nil)
		}
		return said("console.timeline.handoff_draft_sent_as", "", nil)
	case controlplane.EventHandoffDraftDiscarded:
		return say("console.words.event.handoff_draft_discarded", nil)
	case controlplane.EventDispatchStoppedGlobally:
		return say("console.words.event.dispatch_stopped", nil)
	case controlplane.EventDispatchResumedGlobally:
		return say("console.words.event.dispatch_resumed", nil)
	case controlplane.EventFactorAdded, controlplane.EventFactorRemoved, controlplane.EventFactorReset:
		return factorWords(e.Action, str("kind"), str("name"), str("user_name"))
	case controlplane.EventCustomerPasskeyAdded, controlplane.EventCustomerPasskeyRemoved:
		return customerPasskeyWords(e.Action, str("name"), str("shop"))
	case controlplane.EventAuditCheckpointSigned, controlplane.EventAuditExported:
		return auditWords(e)
	}
	// An event this console does not know yet is named by its code.
	if subject == "" {
		return say("console.timeline.unknown", locale.Params{"Event": humanize(string(e.Action))})
	}
	return said("console.timeline.unknown_about", "", locale.Params{"Event": humanize(string(e.Action))})
}

// countClause is the plural clause id for the length of the list v, or
// nothing when it is empty.
func countClause(id string, v any) string {
	n := lenList(v)
	if n == 0 {
		return ""
	}
	return sayN(id, int64(n), nil)
}

func quoted(s string) string {
	if s == "" {
		return ""
	}
	return "“" + s + "”"
}

func lenList(v any) int {
	l, _ := v.([]any)
	return len(l)
}

// stateWords names a request's state inside a sentence ("This request is
// completed"): its own message rather than the badge's label lowercased in
// code, so an installation words it as its language needs. A state this
// console does not know is its label in lower case.
func stateWords(st controlplane.State) string {
	switch st {
	case controlplane.Proposed, controlplane.AwaitingConfirmation, controlplane.AwaitingApproval, controlplane.Approved,
		controlplane.Dispatching, controlplane.Completed, controlplane.Failed, controlplane.Unverified,
		controlplane.NotDispatched, controlplane.Rejected, controlplane.Expired, controlplane.Reversed:
		return say("console.timeline.state."+string(st), nil)
	}
	return strings.ToLower(st.Label())
}

// effectWords says what a business system recorded: "refund.created" →
// "refund created".
func effectWords(kind string) string {
	return strings.ToLower(humanize(kind))
}

// policyVersionWords names the policy version a proposal was routed under.
func policyVersionWords(version int32) string {
	if version <= 0 {
		return ""
	}
	return say("console.timeline.policy_version", locale.Params{"N": strconv.Itoa(int(version))})
}
