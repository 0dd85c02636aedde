// Package assistantsim is a scripted assistant: a Go client of Countersign's
// JSON API and a set of conversations it plays through it — answers,
// clarifications, hand-offs with summaries, proposals of every action, a
// pause mid-task and duplicate proposals. It fills a demo console with
// realistic data, gives load tests a client, and is the example code for
// people wiring their own assistant.
package assistantsim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls the JSON API under /api/v1 with one bearer key.
type Client struct {
	base string
	key  string
	http *http.Client
}

// NewClient returns a client of the console at baseURL (e.g.
// "http://127.0.0.1:8080").
func NewClient(baseURL, key string) *Client {
	return &Client{base: strings.TrimSuffix(baseURL, "/") + "/api/v1", key: key, http: &http.Client{Timeout: 30 * time.Second}}
}

// Error is the API's error body, returned by every call that fails.
type Error struct {
	Status    int               `json:"-"`
	Code      string            `json:"code"`
	Message   string            `json:"message"`
	Retryable bool              `json:"retryable"`
	Hint      string            `json:"hint,omitempty"`
	Fields    map[string]string `json:"fields,omitempty"`
	Details   struct {
		// Candidates lists the matches of an ambiguous reference.
		Candidates []Candidate `json:"candidates"`
	} `json:"details"`
}

// Candidate is one match of an ambiguous reference.
type Candidate struct {
	ID      string `json:"id"`
	Display string `json:"display"`
}

// Error renders the status, code and message.
func (e *Error) Error() string {
	s := fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
	for k, v := range e.Fields {
		s += fmt.Sprintf(" [%s: %s]", k, v)
	}
	return s
}

// Tool is one entry of the catalog.
type Tool struct {
	Name        string         `json:"name"`
	Kind        string         `json:"kind"`
	System      string         `json:"system"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
	Guidance    string         `json:"guidance"`
	Mode        string         `json:"mode"`
}

// Task is a task as the API returns it.
type Task struct {
	ID             string       `json:"id"`
	CustomerRef    string       `json:"customer_ref"`
	ConversationID string       `json:"conversation_id"`
	State          string       `json:"state"`
	Version        int32        `json:"version"`
	AllowedActions []string     `json:"allowed_actions"`
	WriteBudget    int          `json:"write_budget"`
	WritesUsed     int          `json:"writes_used"`
	BudgetLeft     int          `json:"budget_left"`
	Invocations    []Invocation `json:"invocations"`
}

// NewTask is the body of POST /tasks.
type NewTask struct {
	CustomerRef    string   `json:"customer_ref"`
	ConversationID string   `json:"conversation_id"`
	AllowedActions []string `json:"allowed_actions"`
	WriteBudget    int      `json:"write_budget,omitempty"`
	InflightLimit  int      `json:"inflight_limit,omitempty"`
	RatePerMinute  int      `json:"rate_per_minute,omitempty"`
	// CustomerAssertion is the business's site vouching for the customer.
	CustomerAssertion string `json:"customer_assertion,omitempty"`
}

// Invocation is a proposed write as the API returns it.
type Invocation struct {
	ID     string `json:"id"`
	TaskID string `json:"task_id"`
	Action string `json:"action"`
	Target struct {
		System  string `json:"system"`
		ID      string `json:"id"`
		Display string `json:"display"`
	} `json:"target"`
	State   string `json:"state"`
	Version int32  `json:"version"`
	Quote   struct {
		Title        string   `json:"title"`
		Consequences []string `json:"consequences"`
		AmountCents  *int64   `json:"amount_cents"`
	} `json:"quote"`
	Summary          string `json:"summary"`
	SummaryDisagrees bool   `json:"summary_disagrees"`
	Deduplicated     bool   `json:"deduplicated"`
	Next             struct {
		Kind    string `json:"kind"`
		URL     string `json:"url"`
		Message string `json:"message"`
	} `json:"next"`
	Result *struct {
		Reference string `json:"reference"`
	} `json:"result"`
	Say string `json:"say"`
}

// ReadResult is what a read tool returns.
type ReadResult struct {
	Data      json.RawMessage `json:"data"`
	Count     int             `json:"count"`
	Truncated bool            `json:"truncated"`
}

// Event is what the assistant reports about one request.
type Event struct {
	Intent       string         `json:"intent"`
	Mode         string         `json:"mode"`
	TaskID       string         `json:"task_id,omitempty"`
	Summary      string         `json:"summary,omitempty"`
	Facts        map[string]any `json:"facts,omitempty"`
	WouldPropose *WouldPropose  `json:"would_propose,omitempty"`
}

// WouldPropose is, in a hand-off, the write the assistant would have made.
type WouldPropose struct {
	Action string         `json:"action"`
	Args   map[string]any `json:"args,omitempty"`
}

// Tools lists the catalog for a task; q searches it.
func (c *Client) Tools(ctx context.Context, taskID, q string) ([]Tool, error) {
	var out struct {
		Tools []Tool `json:"tools"`
	}
	v := url.Values{}
	if taskID != "" {
		v.Set("task", taskID)
	}
	if q != "" {
		v.Set("q", q)
	}
	return out.Tools, c.do(ctx, http.MethodGet, "/tools?"+v.Encode(), nil, nil, &out)
}

// Read runs a read tool of system (empty: the one system of the task that
// offers it) for the task's customer.
func (c *Client) Read(ctx context.Context, taskID, system, tool string, args map[string]any) (ReadResult, error) {
	var out ReadResult
	if args == nil {
		args = map[string]any{}
	}
	body := map[string]any{"task": taskID, "args": args}
	if system != "" {
		body["system"] = system
	}
	return out, c.do(ctx, http.MethodPost, "/tools/"+url.PathEscape(tool), body, nil, &out)
}

// CreateTask opens a task.
func (c *Client) CreateTask(ctx context.Context, t NewTask) (Task, error) {
	var out Task
	return out, c.do(ctx, http.MethodPost, "/tasks", t, nil, &out)
}

// Task reads a task with its invocations.
func (c *Client) Task(ctx context.Context, id string) (Task, error) {
	var out Task
	return out, c.do(ctx, http.MethodGet, "/tasks/"+url.PathEscape(id), nil, nil, &out)
}

// Pause pauses a task at the version last read.
func (c *Client) Pause(ctx context.Context, t Task) (Task, error) {
	var out Task
	return out, c.do(ctx, http.MethodPost, "/tasks/"+url.PathEscape(t.ID)+"/pause", map[string]any{"expected_version": t.Version}, nil, &out)
}

// Propose proposes a write of system's action (system empty: the one
// system of the task that offers it); idempotencyKey may be empty.
func (c *Client) Propose(ctx context.Context, taskID, system, action string, args map[string]any, summary, idempotencyKey string) (Invocation, error) {
	var out Invocation
	h := http.Header{}
	if idempotencyKey != "" {
		h.Set("Idempotency-Key", idempotencyKey)
	}
	body := map[string]any{"action": action, "args": args, "summary": summary}
	if system != "" {
		body["system"] = system
	}
	return out, c.do(ctx, http.MethodPost, "/tasks/"+url.PathEscape(taskID)+"/invocations", body, h, &out)
}

// Invocation reads an invocation.
func (c *Client) Invocation(ctx context.Context, id string) (Invocation, error) {
	var out Invocation
	return out, c.do(ctx, http.MethodGet, "/invocations/"+url.PathEscape(id), nil, nil, &out)
}

// Report records what the assistant did with a request of a conversation.
func (c *Client) Report(ctx context.Context, conversationID string, e Event) error {
	return c.do(ctx, http.MethodPost, "/conversations/"+url.PathEscape(conversationID)+"/events", e, nil, nil)
}

func (c *Client) do(ctx context.Context, method, path string, body any, h http.Header, out any) error {
	var rdr io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rdr = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rdr)
	if err != nil {
		return err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("assistantsim: %s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("assistantsim: %s %s: %w", method, path, err)
	}
	if res.StatusCode >= 300 {
		e := &Error{Status: res.StatusCode}
		if err := json.Unmarshal(raw, e); err != nil || e.Code == "" {
			e.Code, e.Message = "http_"+fmt.Sprint(res.StatusCode), strings.TrimSpace(string(raw))
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("assistantsim: %s %s: decode: %w", method, path, err)
	}
	return nil
}
