package api

import (
	"context"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign/internal/controlplane"
)

// defaultWaitSeconds is how long wait_for_outcome waits when the model
// names no time.
const defaultWaitSeconds = 20

// waitForOutcomeDescription tells the model what the tool does and what to
// tell the customer while it waits: nothing reaches them during the call.
var waitForOutcomeDescription = "Wait for a proposed write to move on, instead of calling get_invocation again and again: it returns " +
	"as soon as the proposal leaves the state it is in (or the state you name), at once when nothing more will happen to it, " +
	"or after seconds (default " + strconv.Itoa(defaultWaitSeconds) + ", at most " + strconv.Itoa(int(controlplane.MaxWait.Seconds())) +
	") with where it stands then. The customer hears nothing from you while it waits, so before you call it tell them the " +
	"sentence in say of the proposal (that a person will decide, or that the page to confirm on waits for them). When it returns, " +
	"tell them the new say; if the state is still the same, you may wait again, or tell them they will hear back. " +
	"Never tell the customer something is done unless state is completed."

// addMCPWaitTool offers wait_for_outcome: GET /invocations/{id}?wait= for
// models.
func (h *Handler) addMCPWaitTool(srv *mcp.Server, req mcpRequest) {
	most := int(controlplane.MaxWait.Seconds())
	srv.AddTool(&mcp.Tool{Name: "wait_for_outcome", Title: "Wait for a proposal's outcome",
		Description: waitForOutcomeDescription,
		InputSchema: objSchema(map[string]any{
			"invocation_id": map[string]any{"type": "string", "description": "the id a propose_ tool returned"},
			"seconds": map[string]any{"type": "integer", "minimum": 1, "maximum": most, "default": defaultWaitSeconds,
				"description": "how long to wait at most"},
			"state": map[string]any{"type": "string", "enum": stateNames(),
				"description": "the state you last saw; omit it to wait for the state it is in now to change"},
		}, "invocation_id"),
		OutputSchema: mcpOutputSchema("Invocation"),
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: no, OpenWorldHint: no}},
		func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				InvocationID string `json:"invocation_id"`
				Seconds      *int   `json:"seconds"`
				State        string `json:"state"`
			}
			if err := strictArgs(r.Params.Arguments, &in); err != nil {
				return toolError(err), nil
			}
			seconds := defaultWaitSeconds
			if in.Seconds != nil {
				seconds = *in.Seconds
			}
			if seconds < 1 || seconds > most {
				return toolError(badRequest("invalid_arguments", "seconds is out of range.",
					map[string]string{"seconds": "a whole number of seconds from 1 to " + strconv.Itoa(most)})), nil
			}
			inv, _, err := h.awaitInvocation(ctx, req.assistant, in.InvocationID, time.Duration(seconds)*time.Second, in.State)
			if err != nil {
				return toolError(err), nil
			}
			return h.invocationResult(ctx, req, r, inv), nil
		})
}

// invocationResult is an invocation as the MCP tools that read one
// (get_invocation, wait_for_outcome) answer it: without the customer's
// page when the client takes it as a URL elicitation.
func (h *Handler) invocationResult(ctx context.Context, req mcpRequest, r *mcp.CallToolRequest, inv controlplane.Invocation) *mcp.CallToolResult {
	out := h.invocationOut(ctx, req.base, inv)
	if urlElicitation(req, r) {
		// The page goes to the customer's client, never to the model.
		out = withoutLink(out, elicitationSent)
	}
	return toolResult(out)
}
