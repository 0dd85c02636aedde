package assistants

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
)

// Tool kinds.
const (
	KindRead  = "read"
	KindWrite = "write"
)

// Modes say how a proposed write goes ahead, from its policy's stage.
const (
	ModeConfirm  = "confirm"  // the customer confirms the quote
	ModeApproval = "approval" // a support agent approves it
	ModeAuto     = "auto"     // automatic within the policy's limits
)

// Tool is one entry of an assistant's catalog, as the API and the MCP
// server show it.
type Tool struct {
	Name        string         `json:"name"`
	Title       string         `json:"title"`
	Kind        string         `json:"kind"`
	System      string         `json:"system"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
	Guidance    string         `json:"guidance,omitempty"`
	// Mode is set on writes: what happens after a proposal with no amount
	// (an amount above a threshold can still send it to approval).
	Mode string `json:"mode,omitempty"`
	// Risk and Limits describe a write's reversibility and hard limits.
	Risk   string   `json:"risk,omitempty"`
	Limits []string `json:"limits,omitempty"`
}

// Catalog lists the tools an assistant may use now, after three filters: what is connected (the registry), what the assistant has turned
// on, and — for writes — what the action's policy leaves on (mode). With a
// task, only its systems and allowed actions remain. q, when set, keeps the
// tools whose name, title or description contain it (case-insensitive).
func (s *Service) Catalog(ctx context.Context, a Assistant, task *controlplane.Task, q string) ([]Tool, error) {
	q = strings.ToLower(strings.TrimSpace(q))
	out := []Tool{}
	for _, sys := range s.registry.Systems() {
		if task != nil && len(task.Systems) > 0 && !contains(task.Systems, sys.Name()) {
			continue
		}
		for _, r := range sys.ReadTools() {
			t := Tool{Name: r.Name, Title: r.Title, Kind: KindRead, System: sys.Name(), Description: r.Description, InputSchema: r.Schema()}
			if matches(t, q) {
				out = append(out, t)
			}
		}
		for _, spec := range sys.Actions() {
			if !a.Enabled[sys.Name()+"/"+spec.Name] || (task != nil && !task.Allows(sys.Name(), spec.Name)) {
				continue
			}
			policy, err := s.cp.Policy(ctx, sys.Name(), spec.Name)
			if apperr.Is(err, apperr.NotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if !policy.Enabled {
				continue
			}
			t := Tool{Name: spec.Name, Title: spec.Title, Kind: KindWrite, System: sys.Name(), Description: spec.Description,
				InputSchema: spec.Schema(), Guidance: spec.Guidance, Mode: modeOf(controlplane.RouteProposal(policy, nil, false)),
				Risk: string(spec.Risk), Limits: spec.Limits}
			if matches(t, q) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

func modeOf(r controlplane.Route) string {
	switch r.State {
	case controlplane.AwaitingConfirmation:
		return ModeConfirm
	case controlplane.Approved:
		return ModeAuto
	}
	return ModeApproval
}

func matches(t Tool, q string) bool {
	if q == "" {
		return true
	}
	return strings.Contains(strings.ToLower(t.Name), q) || strings.Contains(strings.ToLower(t.Title), q) ||
		strings.Contains(strings.ToLower(t.Description), q)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Task returns a task of this assistant. Another assistant's task, or one
// made in the console, is not found: its existence is not revealed.
func (s *Service) Task(ctx context.Context, a Assistant, id string) (controlplane.Task, error) {
	t, err := s.cp.Task(ctx, id)
	if err != nil {
		return controlplane.Task{}, err
	}
	if t.AssistantID != a.ID {
		return controlplane.Task{}, apperr.New(apperr.NotFound, "No such task.")
	}
	return t, nil
}

// Invocation returns an invocation of one of this assistant's tasks, or
// not found.
func (s *Service) Invocation(ctx context.Context, a Assistant, id string) (controlplane.Invocation, controlplane.Task, error) {
	inv, err := s.cp.Invocation(ctx, id)
	if err != nil {
		return controlplane.Invocation{}, controlplane.Task{}, err
	}
	t, err := s.Task(ctx, a, inv.TaskID)
	if apperr.Is(err, apperr.NotFound) {
		return controlplane.Invocation{}, controlplane.Task{}, apperr.New(apperr.NotFound, "No such invocation.")
	}
	return inv, t, err
}

// Read runs a read tool for the task's customer. system may be empty when
// one system the task may use offers the tool. The adapter's allowlist
// decides which fields leave it; its refusals keep their code and hint.
func (s *Service) Read(ctx context.Context, task controlplane.Task, system, tool string, args json.RawMessage) (adapter.ReadResult, error) {
	var found []adapter.System
	for _, sys := range s.registry.Systems() {
		if system != "" && sys.Name() != system {
			continue
		}
		if len(task.Systems) > 0 && !contains(task.Systems, sys.Name()) {
			continue
		}
		for _, r := range sys.ReadTools() {
			if r.Name == tool {
				found = append(found, sys)
			}
		}
	}
	switch {
	case len(found) == 0:
		return adapter.ReadResult{}, &apperr.Error{Kind: apperr.NotFound, Code: "unknown_tool",
			Message: fmt.Sprintf("No read tool %q for this task.", tool), Hint: "List the tools with GET /api/v1/tools?task=…"}
	case len(found) > 1:
		names := make([]string, len(found))
		for i, f := range found {
			names[i] = f.Name()
		}
		return adapter.ReadResult{}, apperr.InvalidFields(map[string]string{"system": "several systems offer " + tool + "; name one of: " + strings.Join(names, ", ")})
	}
	res, err := found[0].Read(ctx, adapter.Principal{CustomerRef: task.CustomerRef}, tool, args)
	if ae, ok := adapter.AsError(err); ok && (ae.Code == codeUnknownCustomer || ae.Code == adapter.CodeNotFound) {
		return nothingFound(found[0], tool)
	}
	if err != nil {
		return adapter.ReadResult{}, fromAdapter(err)
	}
	return res, nil
}

// codeUnknownCustomer is an adapter's refusal of a customer it has no
// single account for.
const codeUnknownCustomer = "unknown_customer"

// nothingFound is the one answer of a read that finds nothing for the
// task's customer, whether the customer has no such object or the system
// does not know the customer at all: a read must not tell a known customer
// from an unknown one. A tool that lists (no required argument) answers
// an empty list; one that looks up an object answers not found, in words
// made from the tool alone.
func nothingFound(sys adapter.System, tool string) (adapter.ReadResult, error) {
	for _, r := range sys.ReadTools() {
		if r.Name != tool {
			continue
		}
		for _, p := range r.Params {
			if p.Required {
				return adapter.ReadResult{}, &apperr.Error{Kind: apperr.NotFound, Code: adapter.CodeNotFound,
					Message: fmt.Sprintf("%s found nothing for this customer with these arguments.", tool),
					Hint:    "Use a list tool to see the customer's objects and pass one of their ids."}
			}
		}
	}
	return adapter.ReadResult{Data: []any{}}, nil
}

// fromAdapter turns an adapter's refusal into the console's error
// vocabulary, keeping its code, retryable flag, hint and fields.
func fromAdapter(err error) error {
	var ae *adapter.Error
	if !errors.As(err, &ae) {
		return err
	}
	kind := apperr.Invalid
	switch {
	case ae.Code == adapter.CodeNotFound || ae.Code == adapter.CodeUnknownAction || ae.Code == "system_not_connected":
		kind = apperr.NotFound
	case ae.Outcome == adapter.NotSent || ae.Outcome == adapter.Unknown:
		kind = apperr.Upstream
	}
	return &apperr.Error{Kind: kind, Code: ae.Code, Message: ae.Message, Hint: ae.Hint, Retryable: ae.Retryable, Fields: ae.Fields, Err: err}
}
