package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/internal/controlplane"
)

// withTaskID adds the task_id argument to a tool's input schema when the
// connection names no task.
func withTaskID(req mcpRequest, schema map[string]any) map[string]any {
	if !req.open {
		return schema
	}
	out := map[string]any{}
	for k, v := range schema {
		out[k] = v
	}
	props := map[string]any{"task_id": map[string]any{"type": "string", "maxLength": maxTaskIDLen,
		"description": "the task this call belongs to, as open_task returned it"}}
	if p, ok := schema["properties"].(map[string]any); ok {
		for k, v := range p {
			props[k] = v
		}
	}
	out["properties"] = props
	required := []string{"task_id"}
	if r, ok := schema["required"].([]string); ok {
		required = append(required, r...)
	} else if r, ok := schema["required"].([]any); ok {
		for _, v := range r {
			if name, ok := v.(string); ok {
				required = append(required, name)
			}
		}
	}
	out["required"] = required
	if _, ok := out["type"]; !ok {
		out["type"] = "object"
	}
	return out
}

// mcpTask returns the task a tool call belongs to, read afresh, and the
// call's arguments without task_id: the connection's task, or, on a
// connection that names none, the task_id argument's. Another assistant's
// task answers like a missing one.
func (h *Handler) mcpTask(ctx context.Context, req mcpRequest, raw json.RawMessage) (controlplane.Task, json.RawMessage, error) {
	if !req.open {
		t, err := h.cfg.Assistants.Task(ctx, req.assistant, req.task.ID)
		return t, raw, err
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(orEmpty(raw), &args); err != nil {
		return controlplane.Task{}, nil, badRequest("malformed_json", "The arguments must be one JSON object.", nil)
	}
	var id string
	if v, ok := args["task_id"]; ok {
		_ = json.Unmarshal(v, &id)
	}
	if strings.TrimSpace(id) == "" {
		return controlplane.Task{}, nil, apperr.InvalidFields(map[string]string{"task_id": "required: open a task with open_task and pass its id"})
	}
	delete(args, "task_id")
	rest, _ := json.Marshal(args)
	t, err := h.cfg.Assistants.Task(ctx, req.assistant, id)
	return t, rest, err
}

// addMCPOpenTask offers open_task on a connection that names no task: the
// same as POST /api/v1/tasks, with the same defaults and limits.
func (h *Handler) addMCPOpenTask(srv *mcp.Server, req mcpRequest) {
	intProp := func(desc string) map[string]any {
		return map[string]any{"type": "integer", "minimum": 1, "description": desc}
	}
	schema := objSchema(map[string]any{
		"customer_ref":    map[string]any{"type": "string", "maxLength": maxCustomerRefLen, "description": "the signed-in customer's e-mail address: every call of the task acts for this customer only"},
		"conversation_id": map[string]any{"type": "string", "maxLength": maxConversationIDLen, "description": "your conversation's id; it belongs to you from its first use"},
		"allowed_actions": map[string]any{"type": "array", "maxItems": maxAllowedActions, "items": map[string]any{"type": "string", "maxLength": maxActionNameLen},
			"description": "the write actions this task may propose (names from the propose_ tools without the prefix), at least one; read tools work in every task and need not be listed"},
		"write_budget": intProp(fmt.Sprintf("writes the task may send in all (default %d, at most your maximum %d); never replenished",
			assistants.DefaultWriteBudget, req.assistant.Grants.MaxWriteBudget)),
		"inflight_limit": intProp(fmt.Sprintf("writes in flight at once (default %d, at most your maximum %d)",
			assistants.DefaultInflightLimit, req.assistant.Grants.MaxInflightLimit)),
		"rate_per_minute": intProp(fmt.Sprintf("writes a minute (default %d, at most your maximum %d)",
			assistants.DefaultRatePerMinute, req.assistant.Grants.MaxRatePerMinute)),
		"customer_assertion": map[string]any{"type": "string", "maxLength": maxAssertionLen,
			"description": "the task assertion the business's site signed for you and this customer, as it handed it to you; " +
				"required unless an admin let you act for any customer"},
	}, "customer_ref", "conversation_id", "allowed_actions")
	srv.AddTool(&mcp.Tool{Name: "open_task", Title: "Open a task for one customer",
		Description: "Open the task that bounds your work for one customer in one conversation: which write actions it may propose, " +
			"its write budget and limits. Every other tool takes its task_id. A person can see, pause and cancel it.",
		InputSchema: schema, OutputSchema: mcpOutputSchema("Task"),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: no, OpenWorldHint: no}},
		func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in newTaskRequest
			if err := strictArgs(r.Params.Arguments, &in); err != nil {
				return toolError(err), nil
			}
			if err := in.OverLimits().Err(); err != nil {
				return toolError(err), nil
			}
			t, err := h.createTask(ctx, req.assistant, in)
			if err != nil {
				return toolError(err), nil
			}
			return toolResult(taskOut(t)), nil
		})
}
