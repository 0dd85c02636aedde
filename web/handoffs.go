package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/apperr"
	"countersign/store"
	"countersign/views"
)

// handleHandoffs answers GET /handoffs: conversations the assistant handed
// to a person, with the summary, facts and would-be proposal it prepared,
// untaken first.
func (s *Server) handleHandoffs(c echo.Context) error {
	u, _ := currentUser(c)
	rows, err := s.cfg.Store.Handoffs(c.Request().Context(), 100)
	if err != nil {
		return err
	}
	var v views.HandoffsView
	for _, h := range rows {
		row := views.HandoffRow{ID: h.ID, ConversationID: h.ConversationID, Intent: h.Intent, At: h.At.UTC().Format("Jan 2 15:04 UTC")}
		if h.TaskID != nil {
			row.TaskID = *h.TaskID
		}
		var data struct {
			Summary      string          `json:"summary"`
			Facts        json.RawMessage `json:"facts"`
			WouldPropose json.RawMessage `json:"would_propose"`
		}
		_ = json.Unmarshal(h.Data, &data)
		row.Summary = data.Summary
		if row.Summary == "" {
			row.Summary = "(the assistant left no summary)"
		}
		row.Facts = factLines(data.Facts)
		if len(data.WouldPropose) > 0 && string(data.WouldPropose) != "null" {
			row.WouldPropose = string(data.WouldPropose)
		}
		if h.TakenBy != nil {
			row.TakenByMe = *h.TakenBy == u.ID
			row.TakenBy = "you"
			if !row.TakenByMe && h.TakenByName != nil {
				row.TakenBy = *h.TakenByName
			}
		}
		v.Handoffs = append(v.Handoffs, row)
	}
	p, err := s.page(c, "Hand-offs")
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.Handoffs(p, v))
}

// factLines shows the facts the assistant read: a list of strings, or an
// object shown as "key: value" lines.
func factLines(raw json.RawMessage) []string {
	var list []any
	if json.Unmarshal(raw, &list) == nil {
		out := make([]string, 0, len(list))
		for _, f := range list {
			out = append(out, argText(f))
		}
		return out
	}
	var obj map[string]any
	if json.Unmarshal(raw, &obj) == nil {
		var out []string
		for _, a := range flattenArgs(raw) {
			out = append(out, a.Name+": "+a.Value)
		}
		return out
	}
	return nil
}

// handleHandoffTake answers POST /handoffs/:id/take: the hand-off is
// assigned to the signed-in person unless someone took it first.
func (s *Server) handleHandoffTake(c echo.Context) error {
	u, _ := currentUser(c)
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return apperr.New(apperr.NotFound, "No such hand-off.")
	}
	by, err := s.cfg.Store.TakeHandoff(c.Request().Context(), id, u.ID, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return apperr.Wrap(err, apperr.NotFound, "No such hand-off.")
	}
	if err != nil {
		return err
	}
	if by != u.ID {
		setFlash(c, "Someone else took this conversation first.", true)
	} else {
		setFlash(c, fmt.Sprintf("You took hand-off %d. The customer's conversation is yours.", id), false)
	}
	return seeOther(c, "/handoffs")
}
