package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/views"
)

// handleHandoffs answers GET /handoffs: conversations the assistant handed
// to a person, with the summary, facts and would-be proposal it prepared,
// untaken first.
func (s *Server) handleHandoffs(c echo.Context) error {
	u, _ := currentUser(c)
	handoffs, err := s.cfg.Control.Handoffs(c.Request().Context(), 100)
	if err != nil {
		return err
	}
	var v views.HandoffsView
	for _, h := range handoffs {
		row := views.HandoffRow{ID: h.ID, ConversationID: h.ConversationID, Intent: h.Intent, At: h.At.UTC().Format("Jan 2 15:04 UTC"),
			TaskID: h.TaskID, Summary: h.Summary, Facts: factLines(h.Facts)}
		if row.Summary == "" {
			row.Summary = "(the assistant left no summary)"
		}
		if len(h.WouldPropose) > 0 && string(h.WouldPropose) != "null" {
			row.WouldPropose = string(h.WouldPropose)
		}
		if h.TakenBy != 0 {
			row.TakenByMe = h.TakenBy == u.ID
			row.TakenBy = "you"
			if !row.TakenByMe {
				row.TakenBy = h.TakenByName
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
	by, err := s.cfg.Control.TakeHandoff(c.Request().Context(), actorOf(u), id)
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
