package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/internal/controlplane"
	"countersign/web/kit"
)

// mcpTaskHeader names the task of an MCP connection when the URL does not
// (/mcp?task=…).
const mcpTaskHeader = "Countersign-Task"

// mcpRequest is what the MCP server needs from the HTTP request that
// carries a call: the assistant, its task and the console's address.
type mcpRequest struct {
	assistant assistants.Assistant
	task      controlplane.Task
	// open says the connection names no task: a stock MCP client configured
	// with the URL and the key alone. Its tools then take task_id, and
	// open_task opens one.
	open bool
	base string
	// urlElicitation says a 2025-11-25 client declared URL-mode
	// elicitation at initialize (read from the session id minted then);
	// later protocol versions declare it in each call.
	urlElicitation bool
	// srv is the server built for this request: the SDK asks for it twice.
	srv *mcp.Server
}

type mcpRequestKey struct{}

const mcpInstructions = `Countersign lets you act on the business's systems for one customer, within one task.
Read tools return facts; use them before proposing. A propose_<action> tool never changes anything by itself:
it dry-runs the write and returns a quote and what happens next. If next.kind is "confirm", send the customer
next.url and tell them nothing happens until they confirm there, after showing it is them (an e-mailed code or their
account); you cannot confirm for them. When next.url is empty and next.elicitation is set, their app was given the page
instead of you: tell them to confirm on the page it opened. If "approval", tell them a person will decide.
Always tell the customer exactly the sentence in "say". Read the guidance resource (or prompt) of an action before
choosing it. To learn how a proposal ends, call wait_for_outcome rather than get_invocation again and again.
If the customer says "stop", call pause_task. If your connection names no task (no ?task= in its URL),
call open_task first and pass the task_id it returns to every other tool.`

// newMCPHandler builds the streamable-HTTP MCP handler. It is stateless:
// each POST builds a server offering the calling assistant's catalog for
// the connection's task, so a catalog change shows on the next call.
func (h *Handler) newMCPHandler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		req, ok := r.Context().Value(mcpRequestKey{}).(*mcpRequest)
		if !ok {
			return nil
		}
		if req.srv != nil {
			return req.srv
		}
		srv, err := h.mcpServer(r.Context(), *req)
		if err != nil {
			h.Log.Error("build MCP server", "assistant_id", req.assistant.ID, "error", err)
			return nil
		}
		req.srv = srv
		return srv
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: h.Log,
		// handleMCP checks the Origin of browsers' requests itself
		// (checkMCPRequest); the SDK's check of Host on loopback would
		// refuse a console behind a local proxy.
		DisableLocalhostProtection: true})
}

// handleMCP answers POST /mcp: the MCP server over streamable HTTP, for
// the task named by ?task= or the Countersign-Task header; without one, a
// stock client's connection whose tools take task_id and which opens tasks
// with open_task. Every call names its task, so any console instance serves
// any call and nothing of the connection lives in memory.
func (h *Handler) handleMCP(c echo.Context) error {
	a := currentAssistant(c)
	id := c.QueryParam("task")
	if id == "" {
		id = c.Request().Header.Get(mcpTaskHeader)
	}
	body := peekBody(c.Request())
	if done, err := h.checkMCPRequest(c, body); done {
		return err
	}
	if isJSONArray(body) {
		return c.JSON(http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": -32600, "message": "JSON-RPC batches are not accepted: send one request per HTTP request.",
				"data": kit.APIError{Code: "batch_not_allowed", Message: "JSON-RPC batches are not accepted.",
					Hint: "Send each call in its own POST /mcp; each counts against the key's rate limit."}}})
	}
	req := &mcpRequest{assistant: a, open: id == "", base: baseURL(c),
		urlElicitation: sessionDeclaresURL(c.Request().Header.Get("Mcp-Session-Id"))}
	if !req.open {
		task, err := h.cfg.Assistants.Task(c.Request().Context(), a, id)
		if err != nil {
			return h.mcpError(c, err)
		}
		req.task = task
	}
	if initialize, urlMode := initializeDeclaresURL(body); initialize {
		// Under 2025-11-25 the client's capabilities come only with
		// initialize: the session id carries the one that matters to
		// every instance that serves its later calls.
		c.Response().Header().Set("Mcp-Session-Id", mintSessionID(urlMode))
	}
	ctx := context.WithValue(c.Request().Context(), mcpRequestKey{}, req)
	h.mcp.ServeHTTP(c.Response(), c.Request().WithContext(ctx))
	return nil
}

// peekBody reads the request's body and puts it back. The bearer
// middleware already read and bounded it, so this costs no I/O.
func peekBody(r *http.Request) []byte {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body
}

// isJSONArray reports whether the request's body is a JSON array: a
// JSON-RPC batch. MCP removed batching in protocol 2025-06-18, and the SDK
// still accepts one under older versions; refusing every batch keeps one
// call per HTTP request, so the key's rate limit (authorizeBearer) counts
// each call and a batch cannot run hundreds of proposals for one token.
func isJSONArray(body []byte) bool {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '['
}

// mcpError answers a request the MCP server cannot take (an unknown task in
// the URL, a body naming a key twice) as a JSON-RPC error, which MCP clients understand, with the
// API's error in its data.
func (h *Handler) mcpError(c echo.Context, err error) error {
	status, body := kit.Describe(err)
	return c.JSON(status, map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": -32602, "message": body.Message, "data": body}})
}

// mcpServer offers the same filtered catalog as GET /api/v1/tools for the
// task, and the calls that follow a proposal.
func (h *Handler) mcpServer(ctx context.Context, req mcpRequest) (*mcp.Server, error) {
	var scope *controlplane.Task
	if !req.open {
		scope = &req.task
	}
	tools, err := h.cfg.Assistants.Catalog(ctx, req.assistant, scope, "")
	if err != nil {
		return nil, err
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "countersign", Title: "Countersign", Version: "1"},
		&mcp.ServerOptions{Instructions: mcpInstructions, Logger: h.Log, Capabilities: mcpCapabilities(tools),
			// Lists and guidance are the calling assistant's (its catalog,
			// its task): no intermediary may serve them to another caller.
			SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" }})
	if req.open {
		h.addMCPOpenTask(srv, req)
	}
	names := mcpToolNames(tools)
	for i, t := range tools {
		if t.Kind == assistants.KindRead {
			h.addMCPReadTool(srv, req, t, names[i])
			continue
		}
		h.addMCPWriteTool(srv, req, t, names[i])
	}
	srv.AddTool(&mcp.Tool{Name: "get_invocation", Title: "Where a proposal stands",
		Description:  "Read a proposed write: its state, result, error and the sentence you may say to the customer now (say). Never tell the customer something is done unless state is completed.",
		InputSchema:  objSchema(map[string]any{"invocation_id": map[string]any{"type": "string", "description": "the id a propose_ tool returned"}}, "invocation_id"),
		OutputSchema: mcpOutputSchema("Invocation"),
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: no, OpenWorldHint: no}},
		func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				InvocationID string `json:"invocation_id"`
			}
			if err := strictArgs(r.Params.Arguments, &in); err != nil {
				return toolError(err), nil
			}
			inv, _, err := h.awaitInvocation(ctx, req.assistant, in.InvocationID, 0, "")
			if err != nil {
				return toolError(err), nil
			}
			return h.invocationResult(ctx, req, r, inv), nil
		})
	h.addMCPWaitTool(srv, req)
	srv.AddTool(&mcp.Tool{Name: "pause_task", Title: "Pause this task",
		Description:  "Pause the task when the customer says stop: once this returns no further request is sent; a request already on its way to the business system may still finish. A person resumes it.",
		InputSchema:  withTaskID(req, objSchema(map[string]any{"expected_version": map[string]any{"type": "integer", "description": "the task's version as you last read it; omit to pause whatever its version"}})),
		OutputSchema: mcpOutputSchema("Task"),
		// Pausing stops sending; a person resumes it, and it undoes nothing.
		Annotations: &mcp.ToolAnnotations{DestructiveHint: no, OpenWorldHint: no}},
		func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			task, rest, err := h.mcpTask(ctx, req, r.Params.Arguments)
			if err != nil {
				return toolError(err), nil
			}
			var in struct {
				ExpectedVersion int32 `json:"expected_version"`
			}
			if err := strictArgs(rest, &in); err != nil {
				return toolError(err), nil
			}
			t, err := h.cfg.Control.ChangeTask(ctx, req.assistant.Actor(), task.ID, controlplane.TaskPause, in.ExpectedVersion)
			if err != nil {
				return toolError(err), nil
			}
			return toolResult(taskOut(t)), nil
		})
	return srv, nil
}

// no is the false of a hint that defaults to true (destructiveHint,
// openWorldHint).
var no = new(bool)

// yes is an explicit true.
var yes = func() *bool { b := true; return &b }()

// mcpCapabilities are what the server advertises: tools, and the guidance
// prompts and resources when the catalog has writes. Neither logging nor
// listChanged: the server is stateless, sends no log message and no list
// change notification (a catalog change shows on the next call).
func mcpCapabilities(tools []assistants.Tool) *mcp.ServerCapabilities {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
	for _, t := range tools {
		if t.Kind != assistants.KindRead {
			caps.Prompts, caps.Resources = &mcp.PromptCapabilities{}, &mcp.ResourceCapabilities{}
		}
	}
	return caps
}

// mcpToolNames names each tool of a catalog for MCP, where a name must be
// unique: its own name, or system__name when two systems of the catalog offer
// a tool of that name and kind (a system's name has no underscore, so the
// two never collide). A later registration under a name would silently
// replace the earlier one, leaving one system's tool out of reach.
func mcpToolNames(tools []assistants.Tool) []string {
	type key struct {
		kind, name string
	}
	systems := map[key]int{}
	for _, t := range tools {
		systems[key{t.Kind, t.Name}]++
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
		if systems[key{t.Kind, t.Name}] > 1 {
			names[i] = t.System + "__" + t.Name
		}
	}
	return names
}

func (h *Handler) addMCPReadTool(srv *mcp.Server, req mcpRequest, t assistants.Tool, name string) {
	srv.AddTool(&mcp.Tool{Name: name, Title: t.Title, Description: sentenceEnd(t.Description) + " It reads the " + t.System + " system and changes nothing.",
		InputSchema: withTaskID(req, t.InputSchema), OutputSchema: mcpOutputSchema("ReadResult"),
		// It reads the business's system, outside Countersign.
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: no, OpenWorldHint: yes}},
		func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			task, args, err := h.mcpTask(ctx, req, r.Params.Arguments)
			if err != nil {
				return toolError(err), nil
			}
			res, err := h.cfg.Assistants.Read(ctx, task, t.System, t.Name, args)
			if err != nil {
				return toolError(err), nil
			}
			return toolResult(res), nil
		})
}

// addMCPWriteTool offers propose_<action>, with the action's guidance as a
// resource and a prompt. The tool's input is the action's arguments plus
// summary and idempotency_key.
func (h *Handler) addMCPWriteTool(srv *mcp.Server, req mcpRequest, t assistants.Tool, name string) {
	schema := map[string]any{}
	for k, v := range t.InputSchema {
		schema[k] = v
	}
	props := map[string]any{}
	if p, ok := t.InputSchema["properties"].(map[string]any); ok {
		for k, v := range p {
			props[k] = v
		}
	}
	props["summary"] = map[string]any{"type": "string", "description": "your own one-line description of the change; the quote wins when they disagree"}
	props["idempotency_key"] = map[string]any{"type": "string", "maxLength": 200, "description": "optional: repeat it to repeat the same request safely"}
	schema["properties"] = props
	schema = withTaskID(req, schema)
	guidanceURI := "countersign://guidance/" + t.System + "/" + t.Name
	how := map[string]string{
		assistants.ModeConfirm:  "the customer confirms it on a page, after proving it is them: send them next.url (or, when their app opened the page itself, tell them to confirm there)",
		assistants.ModeApproval: "a support agent approves it: tell the customer a person will decide",
		assistants.ModeAuto:     "it goes ahead automatically within the policy's limits",
	}[t.Mode]
	desc := mcpWriteDescription(t, how, guidanceURI)
	srv.AddTool(&mcp.Tool{Name: "propose_" + name, Title: "Propose: " + t.Title, Description: desc, InputSchema: schema,
		OutputSchema: mcpOutputSchema("Invocation"),
		// It records a proposal (not read-only) and changes nothing in the
		// business's system until a person or the policy says yes (not
		// destructive); the same call in the conversation is recognised as
		// the same request (idempotent); it dry-runs against that system.
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: no, OpenWorldHint: yes}},
		func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			task, rest, err := h.mcpTask(ctx, req, r.Params.Arguments)
			if err != nil {
				return toolError(err), nil
			}
			if state := r.Params.RequestState; state != "" {
				// The retry of a multi round-trip: the customer's client
				// was given the page; say what the customer answered.
				inv, err := h.elicitedInvocation(ctx, req, task, t, state)
				if err != nil {
					return toolError(err), nil
				}
				return toolResult(withoutLink(h.invocationOut(ctx, req.base, inv), elicitedAction(r))), nil
			}
			var args map[string]json.RawMessage
			if err := json.Unmarshal(orEmpty(rest), &args); err != nil {
				return toolError(badRequest("malformed_json", "The arguments must be one JSON object.", nil)), nil
			}
			var p proposal
			p.action, p.system = t.Name, t.System
			if v, ok := args["summary"]; ok {
				_ = json.Unmarshal(v, &p.summary)
				delete(args, "summary")
			}
			if v, ok := args["idempotency_key"]; ok {
				_ = json.Unmarshal(v, &p.key)
				delete(args, "idempotency_key")
			}
			p.args, _ = json.Marshal(args)
			inv, err := h.propose(ctx, req.assistant, task, p)
			if err != nil {
				return toolError(err), nil
			}
			return h.deliverProposal(req, r, inv, h.invocationOut(ctx, req.base, inv))
		})
	srv.AddResource(&mcp.Resource{URI: guidanceURI, Name: t.System + "/" + t.Name, Title: "Guidance: " + t.Title,
		Description: "When to use " + t.Name + ", and what its policy allows.", MIMEType: "text/plain"},
		func(ctx context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: guidanceURI, MIMEType: "text/plain", Text: guidanceText(t)}}}, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: "guidance_" + name, Title: "Guidance: " + t.Title,
		Description: "The policy guidance of " + t.Name + ", to read before choosing it."},
		func(ctx context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "Guidance: " + t.Title,
				Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: guidanceText(t)}}}}, nil
		})
}

// mcpWriteDescription is a propose_ tool's description. The action's title
// is an imperative ("Refund an order"), so it follows "Propose to".
func mcpWriteDescription(t assistants.Tool, how, guidanceURI string) string {
	d := fmt.Sprintf("Propose to %s in the %s system. This is a dry-run first: nothing changes when you call it. It returns the quote "+
		"(what will happen, in the business's words), the invocation id and next.", kit.LowerFirst(strings.TrimSuffix(t.Title, ".")), t.System)
	if how != "" {
		d += " Then " + how + "."
	}
	d += " Tell the customer the sentence in say, and relay the confirmation link when next.kind is confirm. Read " + guidanceURI +
		" before choosing this."
	if t.Description != "" {
		d += " " + sentenceEnd(t.Description)
	}
	return d
}

// sentenceEnd makes s end with a full stop.
func sentenceEnd(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}

func guidanceText(t assistants.Tool) string {
	var b strings.Builder
	b.WriteString(t.Guidance)
	fmt.Fprintf(&b, "\n\nHow it goes ahead now: %s.", t.Mode)
	if len(t.Limits) > 0 {
		b.WriteString("\nHard limits: " + strings.Join(t.Limits, "; ") + ".")
	}
	return b.String()
}

func objSchema(props map[string]any, required ...string) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// strictArgs decodes tool arguments, refusing fields the tool does not take.
func strictArgs(raw json.RawMessage, dst any) error {
	dec := json.NewDecoder(strings.NewReader(string(orEmpty(raw))))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return badRequest("invalid_arguments", "The arguments do not match the tool's input schema.",
			map[string]string{"": "takes only: " + strings.Join(jsonFields(dst), ", ")})
	}
	return nil
}

// toolResult is a small structured result, also given as JSON text for
// clients that read only content.
func toolResult(v any) *mcp.CallToolResult {
	b, _ := json.Marshal(v)
	var structured any
	_ = json.Unmarshal(b, &structured)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: structured}
}

// toolError reports an error in the tool's result, where the model can read
// it: the same {code, message, retryable, hint, fields} as the API.
func toolError(err error) *mcp.CallToolResult {
	body := kit.APIError{Code: string(apperr.Internal), Message: "Something went wrong on our side. It has been logged; please try again.", Retryable: true}
	if e, ok := apperr.As(err); ok && e.Kind != apperr.Internal {
		body = kit.APIError{Code: e.CodeOrKind(), Message: e.Message, Retryable: e.Retryable, Hint: e.Hint, Fields: e.Fields, Details: e.Details}
	}
	r := toolResult(body)
	r.IsError = true
	return r
}
