package api

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"countersign/internal/assistants"
	"countersign/web/kit"
)

// conversationEventRequest is the body of POST
// /api/v1/conversations/{id}/events.
type conversationEventRequest struct {
	Intent       string                   `json:"intent"`
	Mode         string                   `json:"mode"`
	TaskID       string                   `json:"task_id"`
	Summary      string                   `json:"summary"`
	Facts        map[string]any           `json:"facts"`
	WouldPropose *assistants.WouldPropose `json:"would_propose"`
}

// handleAPIConversationEvent answers POST /api/v1/conversations/:id/events:
// the assistant reports what it did with a request (201). A body past
// assistants.MaxEventBytes is a 413; past the bounds on events a 429 with
// Retry-After.
func (h *Handler) handleAPIConversationEvent(c echo.Context) error {
	// The whole body is bounded, not only each field: padding and wide
	// characters would otherwise make an event far larger than its parts.
	if len(kit.RawBody(c)) > assistants.MaxEventBytes {
		return assistants.EventTooLarge()
	}
	var req conversationEventRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	e, err := h.cfg.Assistants.Record(c.Request().Context(), currentAssistant(c), assistants.Event{
		ConversationID: c.Param("id"), Intent: assistants.Intent(req.Intent), Mode: assistants.Mode(req.Mode),
		TaskID: req.TaskID, Summary: req.Summary, Facts: req.Facts, WouldPropose: req.WouldPropose})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, e)
}

// handleAPIConversation answers GET /api/v1/conversations/:id: where the
// conversation's latest hand-off to a person stands (waiting, taken,
// resolved, given_back, by whom, when, with the person's note). Another
// assistant's conversation is a 404.
func (h *Handler) handleAPIConversation(c echo.Context) error {
	conv, err := h.cfg.Assistants.Conversation(c.Request().Context(), currentAssistant(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, conv)
}

// maxFactsBytes bounds a hand-off's facts, encoded: the agents' hand-off
// page shows them whole.
const maxFactsBytes = 8 << 10

func (r conversationEventRequest) OverLimits() kit.FieldLimits {
	l := kit.FieldLimits{}
	l.Text("task_id", r.TaskID, maxTaskIDLen)
	l.Text("summary", r.Summary, maxSummaryLen)
	if r.Facts != nil {
		facts, _ := json.Marshal(r.Facts)
		l.JSON("facts", facts, maxFactsBytes)
	}
	if w := r.WouldPropose; w != nil {
		l.Text("would_propose.action", w.Action, maxActionNameLen)
		l.JSON("would_propose.args", w.Args, maxArgsBytes)
		if len(w.Args) > 0 && !bytes.HasPrefix(bytes.TrimSpace(w.Args), []byte("{")) {
			l["would_propose.args"] = "must be a JSON object: the arguments you would have proposed"
		}
	}
	return l
}
