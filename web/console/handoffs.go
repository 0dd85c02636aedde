package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/internal/lists"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// handoffTarget is how soon a person should take a conversation handed
// to them: the list says it and marks the ones waiting longer.
const handoffTarget = 15 * time.Minute

// handleHandoffs answers GET /handoffs: conversations the assistant handed
// to a person (one card a conversation, however often it handed off),
// waiting ones first, each assistant's in turn and the longest waiting
// first within a turn — those over the target marked and counted, and an
// assistant holding most of the waiting ones named — filtered by status
// (waiting, taken, mine) and intent, 50 a page with a count that says how
// many there are (keyset: after=taken.rank.unixmicro.id).
func (h *Handler) handleHandoffs(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	f := lists.HandoffFilter{Status: c.QueryParam("status"), Intent: c.QueryParam("intent"), UserID: u.ID, Limit: listPageSize}
	if !oneOf(f.Status, "", "waiting", "taken", "mine") {
		f.Status = ""
	}
	known := f.Intent == ""
	for _, i := range assistants.Intents {
		known = known || string(i) == f.Intent
	}
	if !known {
		f.Intent = ""
	}
	f.After = parseHandoffCursor(c.QueryParam("after"))
	now := h.Now()
	f.OverSince = now.Add(-handoffTarget)
	page, err := h.cfg.Lists.HandoffList(c.Request().Context(), f)
	if err != nil {
		return err
	}
	link := func(status, after string) string {
		v := url.Values{}
		for k, x := range map[string]string{"status": status, "intent": f.Intent, "after": after} {
			if x != "" {
				v.Set(k, x)
			}
		}
		if len(v) == 0 {
			return "/handoffs"
		}
		return "/handoffs?" + v.Encode()
	}
	k := page.Counts
	v := views.HandoffsView{Status: f.Status, Intent: f.Intent, Target: say("console.words.handoffs.target", locale.Params{"Wait": waitedFor(handoffTarget)}),
		OverTarget: k.OverTarget, Flood: floodWords(k)}
	for _, st := range []struct {
		value string
		n     int64
	}{{"waiting", k.Waiting}, {"mine", k.Mine}, {"taken", k.Taken}, {"", k.All}} {
		id := "status-" + st.value
		if st.value == "" {
			id = "status-all"
		}
		v.Statuses = append(v.Statuses, views.FilterLink{Label: say("console.words.handoffs."+strings.ReplaceAll(id, "-", "."), nil), Count: thousands(st.n), URL: link(st.value, ""),
			Current: st.value == f.Status, TestID: id})
	}
	for _, i := range assistants.Intents {
		v.Intents = append(v.Intents, views.FilterOption{Value: string(i),
			Label:    say("console.words.handoffs.intent", locale.Params{"Intent": intentWords(string(i)), "N": thousands(k.Intents[string(i)])}),
			Selected: string(i) == f.Intent})
	}
	for _, group := range page.Groups {
		row := views.HandoffRow{ID: group.ID, LastID: group.LastID, ConversationID: group.ConversationID, Intent: intentWords(group.Intent), TaskID: group.TaskID,
			Summary: group.Summary, Facts: factLines(group.Facts), Customer: customerWords(group.CustomerRef),
			Waiting:    say("console.words.handoffs.waiting", locale.Params{"Wait": waitedFor(now.Sub(group.At)), "Since": group.At.UTC().Format("Jan 2 15:04 UTC")}),
			OverTarget: group.TakenBy == 0 && now.Sub(group.At) > handoffTarget}
		if group.Count > 1 {
			row.Times = sayN("console.words.handoffs.times", int64(group.Count), locale.Params{"Last": group.LastAt.UTC().Format("Jan 2 15:04 UTC")})
		}
		if row.Summary == "" {
			row.Summary = noSummaryWords(group.Intent, group.CustomerRef, row.Facts)
		}
		row.WouldPropose, row.ProposeArgs = wouldPropose(group.WouldPropose, h.actionName)
		if group.TakenBy != 0 {
			row.TakenByMe = group.TakenBy == u.ID
			row.TakenBy = say("console.words.handoffs.taken_by_you", nil)
			if !row.TakenByMe {
				row.TakenBy = group.TakenByName
			}
		}
		v.Handoffs = append(v.Handoffs, row)
	}
	v.Pager = pagerView(k.Before, len(page.Groups), k.Total, "conversations")
	if page.Next != nil {
		v.Pager.NextURL = link(f.Status, fmt.Sprintf("%d.%d.%d.%d", page.Next.Taken, page.Next.Rank, page.Next.FirstAt.UnixMicro(), page.Next.ID))
	}
	if f.After != nil {
		v.Pager.FirstURL = link(f.Status, "")
	}
	p := h.Page(c, title("handoffs", nil))
	return kit.Render(c, http.StatusOK, views.Handoffs(p, v))
}

// customerWords names a hand-off's customer, or says there is none to
// name.
func customerWords(ref string) string {
	if ref == "" {
		return say("console.words.handoffs.no_customer", nil)
	}
	return ref
}

// noSummaryWords stands in for a missing summary with what is known: what
// the customer wanted, who they are and the first fact the assistant read.
func noSummaryWords(intent, customer string, facts []string) string {
	// One message for each of what is known, so none is glued.
	p := locale.Params{"Intent": intentWords(intent), "Customer": customer}
	id := "console.words.handoffs.no_summary"
	if customer != "" {
		id += "_customer"
	}
	if len(facts) > 0 {
		id, p["Fact"] = id+"_fact", facts[0]
	}
	return say(id, p)
}

// wouldPropose words the write the assistant would have proposed: the
// action in words and its arguments as labelled fields, never JSON.
func wouldPropose(raw json.RawMessage, actionName func(string) string) (string, []views.ArgField) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var w struct {
		Action string          `json:"action"`
		Args   json.RawMessage `json:"args"`
	}
	if json.Unmarshal(raw, &w) != nil || w.Action == "" {
		return "", nil
	}
	return actionName(w.Action), argFields(w.Args, "")
}

// waitedFor writes a waiting time: "4 min", "2 h 05 min", "3 days".
func waitedFor(d time.Duration) string {
	switch {
	case d < time.Minute:
		return say("console.words.time.wait_under_minute", nil)
	case d < time.Hour:
		return say("console.words.time.wait_minutes", locale.Params{"M": strconv.Itoa(int(d.Minutes()))})
	case d < 48*time.Hour:
		return say("console.words.time.wait_hours", locale.Params{"H": strconv.Itoa(int(d.Hours())), "M": fmt.Sprintf("%02d", int(d.Minutes())%60)})
	}
	return say("console.words.time.wait_days", locale.Params{"N": strconv.Itoa(int(d.Hours() / 24))})
}

// floodWords names the assistant filling the people's queue, in words
// for the list's alarm; empty when none does (lists.Flooding).
func floodWords(k lists.HandoffCounts) string {
	a, ok := lists.Flooding(k)
	if !ok {
		return ""
	}
	return say("console.words.handoffs.flood", locale.Params{"Name": a.Name, "Theirs": thousands(a.Waiting), "N": thousands(k.Waiting)})
}

func parseHandoffCursor(s string) *lists.HandoffCursor {
	parts := strings.SplitN(s, ".", 4)
	if len(parts) != 4 {
		return nil
	}
	taken, err1 := strconv.ParseInt(parts[0], 10, 32)
	rank, err2 := strconv.ParseInt(parts[1], 10, 64)
	micros, err3 := strconv.ParseInt(parts[2], 10, 64)
	id, err4 := strconv.ParseInt(parts[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return nil
	}
	return &lists.HandoffCursor{Taken: int32(taken), Rank: rank, FirstAt: time.UnixMicro(micros), ID: id}
}

// factLines shows the facts the assistant read: a list of strings, or an
// object shown as "Label: value" lines.
func factLines(raw json.RawMessage) []string {
	var list []any
	if json.Unmarshal(raw, &list) == nil {
		out := make([]string, 0, len(list))
		for _, f := range list {
			out = append(out, argValueWords("", f, ""))
		}
		return out
	}
	var out []string
	for _, a := range argFields(raw, "") {
		out = append(out, a.Label+": "+a.Value)
	}
	return out
}

// handleHandoffTake answers POST /handoffs/:id/take: the conversation's
// open hand-offs are assigned to the signed-in person unless someone took
// them first, and the person lands on the hand-off's own page.
func (h *Handler) handleHandoffTake(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return refusal(apperr.NotFound, "no_handoff", nil)
	}
	by, err := h.cfg.Handoffs.Take(c.Request().Context(), actorOf(c, u), id)
	if err != nil {
		return h.afterHandoffChange(c, id, err, "")
	}
	if by != u.ID {
		kit.SetFlash(c, locale.Console("console.flash.handoff_taken_first", nil), true)
	} else {
		kit.SetFlash(c, locale.Console("console.flash.handoff_taken", nil), false)
	}
	return kit.SeeOther(c, handoffURL(id))
}
