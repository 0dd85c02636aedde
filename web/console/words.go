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
	case "informational":
		return "A question"
	case "diagnostic":
		return "A problem to diagnose"
	case "navigational":
		return "Looking for something"
	case "transactional_low":
		return "A low-risk change"
	case "transactional_high":
		return "A high-risk change"
	case "ambiguous":
		return "Unclear what the customer wants"
	case "out_of_scope":
		return "Outside what the assistant handles"
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
		return []views.ArgField{{Label: "Arguments", Value: string(raw)}}
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
			return "Yes"
		}
		return "No"
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
		return "A support agent"
	case controlplane.ActorAssistant:
		if name != "" {
			return name + " (assistant)"
		}
		return "The assistant"
	case controlplane.ActorCustomer:
		return "The customer"
	case controlplane.ActorPolicy:
		return "The policy"
	case controlplane.ActorSystem:
		return "Countersign"
	}
	return humanize(string(e.ActorKind))
}

// eventSentence says what an event did, in words, about the request titled
// subject (empty for a task event; "it" when the event before was about the
// same request). It never shows hashes or raw data.
func eventSentence(e controlplane.Event, subject string) string {
	str := func(k string) string { s, _ := e.Data[k].(string); return strings.TrimSpace(s) }
	about := ""
	switch subject {
	case "":
	case "it":
		about = " it"
	default:
		about = " “" + subject + "”"
	}
	with := func(s, extra string) string {
		extra = strings.TrimSuffix(extra, ".")
		if extra == "" {
			return s + "."
		}
		return s + ": " + extra + "."
	}
	switch e.Action {
	case controlplane.EventTaskCreated:
		return "opened the task."
	case controlplane.EventTaskPaused:
		s := "paused the task" + readIn(e) + ": no request of it gets a permit until it is resumed"
		if n := lenList(e.Data["not_dispatched"]); n > 0 {
			s += "; " + views.Plural(int64(n), "approved request", "approved requests") + " will not be sent"
		}
		return s + "."
	case controlplane.EventTaskActive:
		return "resumed the task; nothing was replayed."
	case controlplane.EventTaskCancelled:
		s := "cancelled the task; nothing was undone"
		if n := lenList(e.Data["not_dispatched"]); n > 0 {
			s += "; " + views.Plural(int64(n), "approved request", "approved requests") + " will not be sent"
		}
		if n := lenList(e.Data[controlplane.DataWithdrawnIDs]); n > 0 {
			s += "; " + views.Plural(int64(n), "request waiting for a decision was", "requests waiting for a decision were") + " withdrawn"
		}
		return s + "."
	case controlplane.EventTaskClosed:
		return "closed the task."
	case controlplane.EventInvocationProposed:
		return "proposed" + about + "."
	case controlplane.EventInvocationSummaryDisagreed:
		return with("noted that the assistant's summary disagrees with the quote; the quote is what was shown", quoted(str("summary")))
	case controlplane.EventInvocationAwaitingApproval:
		reason := str("reason")
		if strings.HasPrefix(reason, "stage ") {
			reason = "" // recorded before route reasons were sentences: it only named the stage
		}
		return with("Awaiting approval by a support agent for"+about, kit.LowerFirst(reason))
	case controlplane.EventInvocationAwaitingConfirmation:
		return "Awaiting the customer's confirmation of" + about + "."
	case controlplane.EventInvocationApproved:
		if e.ActorKind == controlplane.ActorPolicy {
			s := "approved" + about + " automatically, within the policy's limits"
			if owner := str("owner_name"); owner != "" {
				s += " (policy owner: " + owner + ")"
			}
			return s + ". Approved is not yet sent."
		}
		return "approved" + about + withPasskey(e) + ". Approved is not yet sent."
	case controlplane.EventInvocationFirstApproval:
		return "gave the first of two approvals of" + about + withPasskey(e) + "; a second person completes it."
	case controlplane.EventInvocationConfirmed:
		return "confirmed" + about + readIn(e) + "."
	case controlplane.EventInvocationDeclined:
		return with("declined"+about+readIn(e), str("reason"))
	case controlplane.EventInvocationRejected:
		return with("rejected"+about, str("reason"))
	case controlplane.EventInvocationSentBack:
		q, _ := controlplane.IsQuestion(str("reason"))
		return with("sent"+about+" back to the assistant with a question", q)
	case controlplane.EventInvocationEdited:
		return with("edited the arguments of"+about, editWords(e)) + " The system quoted the edit again."
	case controlplane.EventInvocationExpired:
		return "Nobody decided on" + about + " before the deadline; it expired."
	case controlplane.EventPermitGranted:
		// The words a support agent uses: the task's limits let it go.
		return "cleared" + about + " to send, within the task's limits."
	case controlplane.EventDispatchStarted:
		return "started sending" + about + "."
	case controlplane.EventDispatchWithheld:
		return with("held back"+about, str("reason"))
	case controlplane.EventInvocationCompleted:
		s := systemWords(str("system")) + " confirmed" + about + " by reading it back: completed"
		if ref, short := str("reference"), str("short_reference"); ref != "" && short != "" && short != ref {
			s += " (reference " + ref + "; the customer was given " + short + ")"
		} else if ref != "" {
			s += " (reference " + ref + ")"
		}
		return s + "."
	case controlplane.EventInvocationFailed:
		s := systemWords(str("system")) + " refused" + about
		if m := strings.TrimSuffix(str("message"), "."); m != "" {
			s += ": " + m
		}
		return s + "; nothing changed."
	case controlplane.EventInvocationUnverified:
		return "No confirmation came back for" + about + ": the result needs checking. Nothing was re-sent."
	case controlplane.EventInvocationNotDispatched:
		if e.Data[controlplane.DataWithdrawn] == true {
			// It waited for a person when its task was cancelled.
			if subject == "it" {
				return "It was withdrawn: the task was cancelled before it was decided; nothing was sent."
			}
			return "Withdrawn" + about + ": the task was cancelled before it was decided; nothing was sent."
		}
		if subject == "it" {
			return with("It was not sent", controlplane.NotDispatchedReason(str("reason")).Sentence())
		}
		return with("Not sent:"+about, controlplane.NotDispatchedReason(str("reason")).Sentence())
	case controlplane.EventInvocationReconciled:
		if str(controlplane.DataBy) == controlplane.BySweep {
			// The console's own look, unasked: which look, what it found.
			n, _ := e.Data["attempt"].(float64)
			s := "The automatic check settled" + about + " from the system's evidence (look " + strconv.Itoa(int(n)) + "): it is now " + strings.ToLower(controlplane.State(str("to")).Label())
			if str("code") == adapter.CodeNotApplied {
				s += ", not applied — nothing changed, and nothing was re-sent"
			}
			if ev := strings.TrimSuffix(str("evidence"), "."); ev != "" {
				s += ". Evidence: " + ev
			}
			return s + "."
		}
		return "reconciled" + about + " from the system's evidence: it is now " + strings.ToLower(controlplane.State(str("to")).Label()) + "."
	case controlplane.EventInvocationReconcileInconclusive:
		if str(controlplane.DataBy) == controlplane.BySweep {
			n, _ := e.Data["attempt"].(float64)
			s := "The automatic check looked" + about + " up " + views.Plural(int64(n), "time", "times") + " without settling it, so it stays “Result needs checking” for a person to check with the system's owner"
			if le := strings.TrimSuffix(str("lookup_error"), "."); le != "" {
				s += "; its last look could not read the system: " + le
			}
			return s + "."
		}
		return "looked" + about + " up: the evidence does not settle it, so it stays “Result needs checking” for a person to check with the system's owner."
	case controlplane.EventInvocationReversed:
		return "Reversed" + about + ": the reversal completed."
	case controlplane.EventInvocationSuperseded:
		return with("replaced"+about+" because the object changed since its quote", str("reason"))
	case controlplane.EventInvocationRequoted:
		return "quoted" + about + " again on the object as it is now."
	case controlplane.EventInvocationRerouted:
		return with("sent"+about+" to the agents' queue instead of sending it", str("why"))
	case controlplane.EventProposalRefused, controlplane.EventProposalBlockedAfterRefusal:
		return refusalWords(e)
	case controlplane.EventTargetUnblocked:
		return with("lifted the block on "+str("target_id"), str("reason"))
	case controlplane.EventHandoffTaken:
		return "took the hand-off of the conversation."
	case controlplane.EventHandoffTakenOver:
		return with("took the conversation over from "+str("from"), str("reason"))
	case controlplane.EventHandoffDraftSent:
		if about == "" {
			return "sent on the assistant's hand-off draft through the normal route."
		}
		return "sent on the assistant's hand-off draft as" + about + ", through the normal route."
	case controlplane.EventHandoffDraftDiscarded:
		return "set aside the assistant's hand-off draft; nothing was proposed."
	case controlplane.EventDispatchStoppedGlobally:
		return "stopped all dispatch: no request gets a permit until it is resumed."
	case controlplane.EventDispatchResumedGlobally:
		return "resumed dispatch; nothing was replayed."
	case controlplane.EventFactorAdded, controlplane.EventFactorRemoved, controlplane.EventFactorReset:
		return factorWords(e.Action, str("kind"), str("name"), str("user_name"))
	case controlplane.EventCustomerPasskeyAdded, controlplane.EventCustomerPasskeyRemoved:
		return customerPasskeyWords(e.Action, str("name"), str("shop"))
	}
	return humanize(string(e.Action)) + about + "."
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
	return "policy version " + strconv.Itoa(int(version)) + " when proposed"
}
