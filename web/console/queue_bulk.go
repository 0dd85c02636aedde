package console

import (
	"encoding/hex"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/views"
	"countersign/web/kit"
)

// bulkMax bounds one bulk approval.
const bulkMax = 50

// handleQueueBulk answers POST /queue/bulk: the confirmation step of a bulk
// approval. Only cards still pending, low-risk (reversible, within the
// automatic limit, one approver) and of actions whose policy lets the
// person's role decide are listed; the others are left out. Those whose
// policy asks for a passkey are left out too, each linked to its step-up
// page.
func (h *Handler) handleQueueBulk(c echo.Context) error {
	ctx := c.Request().Context()
	u, _ := kit.CurrentUser(c)
	ids, err := bulkIDs(c)
	if err != nil {
		return err
	}
	var v views.BulkConfirmView
	policies := policyCache{}
	for _, id := range ids {
		card, err := h.cfg.Control.Card(ctx, id)
		if apperr.Is(err, apperr.NotFound) {
			continue
		}
		if err != nil {
			return err
		}
		cv := h.cardView(ctx, card, u, policies, cardWhole)
		switch bulkChoice(card, cv) {
		case bulkYes:
			v.Cards = append(v.Cards, cv)
		case bulkStepUp:
			v.StepUp = append(v.StepUp, cv)
		}
	}
	if len(v.Cards) == 0 && len(v.StepUp) == 0 {
		return refusal(apperr.NotFound, "bulk_none_left", nil)
	}
	v.Conflicts = bulkConflicts(v.Cards)
	p := h.Page(c, title("bulk", nil))
	return kit.Render(c, http.StatusOK, views.BulkConfirm(p, v))
}

// handleQueueBulkApprove answers POST /queue/bulk/approve: each listed card
// is approved on the version and arguments the confirmation showed, and
// only if it is still low-risk and the person's to decide (the control
// plane asks again); the flash counts what was approved and what was not.
func (h *Handler) handleQueueBulkApprove(c echo.Context) error {
	ctx := c.Request().Context()
	u, _ := kit.CurrentUser(c)
	ids, err := bulkIDs(c)
	if err != nil {
		return err
	}
	// First what is still pending and low-risk, as the confirmation
	// showed it; then, when some change the same object, nothing is
	// approved without the explicit tick.
	type pick struct {
		id      string
		version int32
		hash    []byte
	}
	var picks []pick
	var shown []views.QueueCard
	skipped, stepUp := 0, 0
	policies := policyCache{}
	for _, id := range ids {
		card, err := h.cfg.Control.Card(ctx, id)
		if apperr.Is(err, apperr.NotFound) {
			skipped++
			continue
		}
		if err != nil {
			return err
		}
		cv := h.cardView(ctx, card, u, policies, cardWhole)
		switch bulkChoice(card, cv) {
		case bulkNo:
			skipped++
			continue
		case bulkStepUp:
			stepUp++
			continue
		}
		version, _ := strconv.ParseInt(c.FormValue("v_"+id), 10, 32)
		hash, _ := hex.DecodeString(c.FormValue("h_" + id))
		cv.Version, cv.ArgsHash = int32(version), hex.EncodeToString(hash)
		picks, shown = append(picks, pick{id, int32(version), hash}), append(shown, cv)
	}
	if conflicts := bulkConflicts(shown); len(conflicts) > 0 && c.FormValue("confirm_conflicts") != "1" {
		p := h.Page(c, title("bulk", nil))
		v := views.BulkConfirmView{Cards: shown, Conflicts: conflicts, Errors: views.FieldErrors{
			"confirm_conflicts": say("console.rest.bulk.conflicts", nil)}}
		return kit.Render(c, http.StatusUnprocessableEntity, views.BulkConfirm(p, v))
	}
	approved := 0
	for _, pk := range picks {
		d := controlplane.StaffDecision{Actor: actorOf(c, u), InvocationID: pk.id, Verb: controlplane.StaffApprove, Version: pk.version, ArgsHash: pk.hash}
		if _, err := h.cfg.Control.StaffDecide(ctx, d); err != nil {
			if _, decided := apperr.As(err); !decided {
				return err
			}
			if isStepUpRequired(err) {
				stepUp++ // the policy asked for a passkey meanwhile
			} else {
				skipped++
			}
			continue
		}
		approved++
	}
	kit.SetFlash(c, bulkApprovedWords(approved, skipped, stepUp), (skipped > 0 || stepUp > 0) && approved == 0)
	return kit.SeeOther(c, "/queue")
}

// bulkIDs reads the chosen cards of a bulk approval: 1 to bulkMax ids.
func bulkIDs(c echo.Context) ([]string, error) {
	form, err := c.FormParams()
	if err != nil {
		return nil, err
	}
	ids := form["id"]
	if len(ids) == 0 || len(ids) > bulkMax {
		return nil, apperr.InvalidFields(map[string]string{"id": sayN("console.rest.bulk.error.count", bulkMax, nil)})
	}
	return ids, nil
}

// bulkConflicts groups the cards of a bulk approval that change the same
// object: approved together, a later one may undo or overwrite an earlier.
func bulkConflicts(cards []views.QueueCard) []views.BulkConflict {
	var order []string
	groups := map[string]*views.BulkConflict{}
	for _, c := range cards {
		g, ok := groups[c.TargetKey]
		if !ok {
			g = &views.BulkConflict{TargetDisplay: c.TargetDisplay}
			groups[c.TargetKey] = g
			order = append(order, c.TargetKey)
		}
		g.Titles = append(g.Titles, c.Quote.Title)
	}
	var out []views.BulkConflict
	for _, k := range order {
		if len(groups[k].Titles) > 1 {
			out = append(out, *groups[k])
		}
	}
	return out
}
