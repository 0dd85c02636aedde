package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/internal/controlplane"
	"countersign/web/kit"
)

// invocationJSON is an invocation as the API and the MCP server show it:
// no internal fields (policy versions, leases, raw system data).
type invocationJSON struct {
	ID               string          `json:"id"`
	TaskID           string          `json:"task_id"`
	System           string          `json:"system"`
	Action           string          `json:"action"`
	Target           targetJSON      `json:"target"`
	State            string          `json:"state"`
	StateLabel       string          `json:"state_label"`
	Version          int32           `json:"version"`
	Args             argsJSON        `json:"args"`
	Quote            quoteJSON       `json:"quote"`
	Summary          string          `json:"summary"`
	SummaryDisagrees bool            `json:"summary_disagrees"`
	IdempotencyKey   string          `json:"idempotency_key"`
	Deduplicated     bool            `json:"deduplicated"`
	Next             nextJSON        `json:"next"`
	Result           *resultJSON     `json:"result"`
	Error            *adapterErrJSON `json:"error"`
	// Reason says why it was not dispatched, rejected, declined or
	// expired; null in every other state.
	Reason       *reasonJSON `json:"reason"`
	Verification *verifyJSON `json:"verification,omitempty"`
	// Say is the sentence the assistant may tell the customer now.
	Say         string     `json:"say"`
	RouteReason string     `json:"route_reason,omitempty"`
	DeadlineAt  *time.Time `json:"deadline_at,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	// Reconciliation is set by POST /invocations/{id}/reconcile.
	Reconciliation *reconciliationJSON `json:"reconciliation,omitempty"`
	// ReceiptURL is where a completed (or since reversed) write's signed
	// receipt is (GET /invocations/{id}/receipt).
	ReceiptURL string `json:"receipt_url,omitempty"`
}

type targetJSON struct {
	System  string `json:"system"`
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	Display string `json:"display"`
}

type argsJSON struct {
	Proposed  json.RawMessage `json:"proposed"`
	Approved  json.RawMessage `json:"approved"`
	Effective json.RawMessage `json:"effective"`
}

type quoteJSON struct {
	Title         string              `json:"title"`
	Lines         []adapter.QuoteLine `json:"lines"`
	Consequences  []string            `json:"consequences"`
	AmountCents   *int64              `json:"amount_cents"`
	Currency      string              `json:"currency,omitempty"`
	EffectiveAt   *time.Time          `json:"effective_at"`
	TargetVersion string              `json:"target_version"`
	Reversible    bool                `json:"reversible"`
}

// nextJSON says what happens next: the customer confirms (url is their
// confirmation link), an agent approves, the dispatcher sends it, or
// nothing more.
type nextJSON struct {
	Kind    string `json:"kind"`
	URL     string `json:"url"`
	Message string `json:"message"`
	// Proofs are the ways the customer may prove who they are on the
	// confirmation page ("link", "code", "account", "assertion", "passkey"), when kind is
	// "confirm". The link shows the request; it is not the customer's yes.
	Proofs []string `json:"proofs,omitempty"`
	// Elicitation is set, over MCP, when the confirmation page went to the
	// customer's client as a URL-mode elicitation instead of in url:
	// "accepted", "declined" or "cancelled" (what the customer answered
	// their client), or "sent" (the client was given it).
	Elicitation string `json:"elicitation,omitempty"`
}

// resultJSON is a done change's result: the system's reference, and the
// short one the customer is shown ("#75CDDA"), which say
// uses too; it equals reference when the system gives no short one.
type resultJSON struct {
	Reference      string `json:"reference"`
	ShortReference string `json:"short_reference"`
	Deduplicated   bool   `json:"deduplicated,omitempty"`
	// AmountCents and Currency are the amount the system recorded, when
	// its adapter reads it.
	AmountCents *int64 `json:"amount_cents,omitempty"`
	Currency    string `json:"currency,omitempty"`
}

type adapterErrJSON struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
	Hint      string `json:"hint,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
}

// reasonJSON is why an invocation ended without being carried out: code
// for programs, message for people.
type reasonJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type verifyJSON struct {
	Verified bool      `json:"verified"`
	Evidence string    `json:"evidence"`
	At       time.Time `json:"at"`
}

type reconciliationJSON struct {
	Conclusive bool `json:"conclusive"`
	Found      bool `json:"found"`
}

// invocationOut shapes an invocation for the assistant; while the
// customer's confirmation is awaited it shows the link made when the
// invocation was routed to them. It only reads.
func (h *Handler) invocationOut(ctx context.Context, base string, inv controlplane.Invocation) invocationJSON {
	q := inv.Quote
	out := invocationJSON{ID: inv.ID, TaskID: inv.TaskID, System: inv.System, Action: inv.Action,
		Target: targetJSON{System: inv.Target.System, Kind: inv.Target.Kind, ID: inv.Target.ID, Display: inv.Target.Display},
		State:  string(inv.State), StateLabel: inv.State.Label(), Version: inv.Version,
		Args: argsJSON{Proposed: inv.Args.Proposed, Approved: inv.Args.Approved, Effective: inv.Args.Effective},
		Quote: quoteJSON{Title: q.Title, Lines: q.Lines, Consequences: q.Consequences, AmountCents: q.AmountCents,
			Currency: q.Currency, EffectiveAt: q.EffectiveAt, TargetVersion: q.TargetVersion(), Reversible: h.reversible(inv)},
		Summary: inv.Summary, SummaryDisagrees: inv.SummaryDisagrees, IdempotencyKey: inv.IdempotencyKey,
		Deduplicated: inv.Deduplicated, Say: inv.Say(h.cfg.Control.ActionSpec(inv.System, inv.Action)), RouteReason: inv.RouteReason, DeadlineAt: inv.DeadlineAt, CreatedAt: inv.CreatedAt}
	if out.Quote.Lines == nil {
		out.Quote.Lines = []adapter.QuoteLine{}
	}
	if out.Quote.Consequences == nil {
		out.Quote.Consequences = []string{}
	}
	if inv.Result != nil {
		out.Result = &resultJSON{Reference: inv.Result.Reference, ShortReference: inv.CustomerReference(), Deduplicated: inv.Result.Deduplicated,
			AmountCents: inv.Result.AmountCents, Currency: inv.Result.Currency}
	}
	// A completed or reversed invocation's outcome is known: an error left
	// from before it was reconciled no longer holds.
	if e := inv.Error; e != nil && inv.State != controlplane.Completed && inv.State != controlplane.Reversed {
		out.Error = &adapterErrJSON{Code: e.Code, Message: e.Message, Retryable: e.Retryable, Hint: e.Hint, Outcome: string(e.Outcome)}
	}
	if r := inv.Reason(); r != nil {
		out.Reason = &reasonJSON{Code: r.Code, Message: r.Message}
	}
	if v := inv.Verification; v != nil {
		out.Verification = &verifyJSON{Verified: v.Verified, Evidence: v.Evidence, At: v.At}
	}
	if inv.State == controlplane.Completed || inv.State == controlplane.Reversed {
		out.ReceiptURL = base + apiBase + "/invocations/" + inv.ID + "/receipt"
	}
	switch inv.State {
	case controlplane.AwaitingConfirmation:
		out.Next = nextJSON{Kind: "confirm", Message: confirmMessage(nil)}
		if h.cfg.Confirmations != nil {
			proofs := h.cfg.Confirmations.Accepts(inv.System)
			for _, p := range proofs {
				out.Next.Proofs = append(out.Next.Proofs, string(p))
			}
			out.Next.Message = confirmMessage(proofs)
			link, err := h.cfg.Confirmations.LiveLink(ctx, inv.ID)
			if err != nil {
				h.Log.Warn("confirmation link", "invocation_id", inv.ID, "error", err)
			} else if strings.HasPrefix(link, "/") {
				out.Next.URL = base + link
			} else {
				out.Next.URL = link
			}
		}
	case controlplane.AwaitingApproval:
		out.Next = nextJSON{Kind: "approval", Message: "A support agent approves or rejects it; read the invocation again later."}
	case controlplane.Approved, controlplane.Dispatching, controlplane.Proposed:
		out.Next = nextJSON{Kind: "dispatch", Message: "It is approved and will be sent once; read the invocation again for the verified result."}
	default:
		out.Next = nextJSON{Kind: "none", Message: "Nothing more happens to it; tell the customer what say says."}
	}
	return out
}

// reversible says whether Reverse can undo inv: its quote says a
// compensation exists and the control plane can propose it from the target
// alone. The API never promises a reversal Reverse would refuse.
func (h *Handler) reversible(inv controlplane.Invocation) bool {
	return h.cfg.Control.HasReversal(inv)
}

// baseURL is the console's address as the caller reached it, for
// absolute links.
func baseURL(c echo.Context) string { return c.Scheme() + "://" + c.Request().Host }

// proposeRequest is the body of POST /api/v1/tasks/{id}/invocations.
type proposeRequest struct {
	Action  string          `json:"action"`
	System  string          `json:"system"`
	Args    json.RawMessage `json:"args"`
	Summary string          `json:"summary"`
}

// Limits of a proposal's fields, over the API and MCP alike: past one, the
// call is a 422 naming the field and the limit.
const (
	maxSummaryLen        = 4000
	maxArgsBytes         = 16 << 10
	maxIdempotencyKeyLen = 200
)

// handleAPIPropose answers POST /api/v1/tasks/:id/invocations: dry-runs a
// write and routes it by policy. 201 with the new invocation; 200 with
// deduplicated:true when the same request was made in this conversation
// within the dedup window, or when an Idempotency-Key is repeated.
func (h *Handler) handleAPIPropose(c echo.Context) error {
	var req proposeRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	a := currentAssistant(c)
	ctx := c.Request().Context()
	task, err := h.cfg.Assistants.Task(ctx, a, c.Param("id"))
	if err != nil {
		return err
	}
	key := c.Request().Header.Get("Idempotency-Key")
	inv, err := h.propose(ctx, a, task, proposal{action: req.Action, system: req.System, args: req.Args, summary: req.Summary, key: key})
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if inv.Deduplicated {
		status = http.StatusOK
	}
	return c.JSON(status, h.invocationOut(c.Request().Context(), baseURL(c), inv))
}

// proposal is what the API and the MCP server propose.
type proposal struct {
	action, system, summary, key string
	args                         json.RawMessage
}

// propose checks the assistant has the action turned on, then proposes it
// through the control plane: the API and the MCP server share this path.
func (h *Handler) propose(ctx context.Context, a assistants.Assistant, task controlplane.Task, p proposal) (controlplane.Invocation, error) {
	if strings.TrimSpace(p.action) == "" {
		return controlplane.Invocation{}, apperr.InvalidFields(map[string]string{"action": "required: the action to propose"})
	}
	l := kit.FieldLimits{}
	l.Text("action", p.action, maxActionNameLen)
	l.Text("system", p.system, maxSystemNameLen)
	l.Text("summary", p.summary, maxSummaryLen)
	l.JSON("args", p.args, maxArgsBytes)
	l.Text("Idempotency-Key", p.key, maxIdempotencyKeyLen)
	if err := l.Err(); err != nil {
		return controlplane.Invocation{}, err
	}
	// Naming the system when only one offers the action makes a request
	// the same whether it came with or without it (the Idempotency-Key
	// compares requests), over the API or MCP.
	if p.system == "" {
		offering := slices.DeleteFunc(h.cfg.Registry.Offering(p.action),
			func(system string) bool { return !task.Allows(system, p.action) })
		if len(offering) == 1 {
			p.system = offering[0]
		}
	}
	name := p.action
	if p.system != "" {
		name = p.system + "/" + p.action
	}
	if !enabledFor(a, name) {
		return controlplane.Invocation{}, controlplane.ErrActionNotEnabled(p.action)
	}
	return h.cfg.Control.Propose(ctx, controlplane.Proposal{TaskID: task.ID, System: p.system, Action: p.action,
		Args: p.args, Summary: p.summary, ClientKey: p.key, Actor: a.Actor()})
}

// handleAPIReconcile answers POST /api/v1/invocations/:id/reconcile: a
// read-only inspection of an unverified invocation.
func (h *Handler) handleAPIReconcile(c echo.Context) error {
	a := currentAssistant(c)
	inv, task, err := h.cfg.Assistants.Invocation(c.Request().Context(), a, c.Param("id"))
	if err != nil {
		return err
	}
	rec, err := h.cfg.Control.ReconcileLoaded(c.Request().Context(), a.Actor(), inv, task)
	if err != nil {
		return err
	}
	out := h.invocationOut(c.Request().Context(), baseURL(c), rec.Invocation)
	out.Reconciliation = &reconciliationJSON{Conclusive: rec.Conclusive, Found: rec.Lookup.Found}
	return c.JSON(http.StatusOK, out)
}

// handleAPIReverse answers POST /api/v1/invocations/:id/reverse: proposes
// the compensation of a completed invocation, with its own approval (201).
func (h *Handler) handleAPIReverse(c echo.Context) error {
	a := currentAssistant(c)
	inv, _, err := h.cfg.Assistants.Invocation(c.Request().Context(), a, c.Param("id"))
	if err != nil {
		return err
	}
	// The compensation is authorised by its own approval, but the
	// assistant must still have its action turned on.
	if _, spec, err := h.cfg.Registry.Action(inv.System, inv.Action); err == nil && spec.Compensation != "" &&
		!enabledFor(a, inv.System+"/"+spec.Compensation) {
		return controlplane.ErrActionNotEnabled(spec.Compensation)
	}
	comp, err := h.cfg.Control.Reverse(c.Request().Context(), a.Actor(), inv.ID)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if comp.Deduplicated {
		status = http.StatusOK
	}
	return c.JSON(status, h.invocationOut(c.Request().Context(), baseURL(c), comp))
}
