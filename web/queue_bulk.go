package web

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/views"
)

// bulkMax bounds one bulk approval.
const bulkMax = 50

// handleQueueBulk answers POST /queue/bulk: the confirmation step of a bulk
// approval. Only cards still pending and low-risk (reversible, within the
// automatic limit, one approver) are listed; the others are left out.
func (s *Server) handleQueueBulk(c echo.Context) error {
	ctx := c.Request().Context()
	u, _ := currentUser(c)
	ids, err := bulkIDs(c)
	if err != nil {
		return err
	}
	var v views.BulkConfirmView
	policies := policyCache{}
	for _, id := range ids {
		card, err := s.cfg.Control.Card(ctx, id)
		if apperr.Is(err, apperr.NotFound) {
			continue
		}
		if err != nil {
			return err
		}
		cv := s.cardView(ctx, card, u, policies)
		if card.State == controlplane.AwaitingApproval && cv.LowRisk {
			v.Cards = append(v.Cards, cv)
		}
	}
	if len(v.Cards) == 0 {
		return apperr.New(apperr.NotFound, "None of those requests is still pending and low-risk.")
	}
	p, err := s.page(c, "Approve several requests")
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.BulkConfirm(p, v))
}

// handleQueueBulkApprove answers POST /queue/bulk/approve: each listed card
// is approved on the version and arguments the confirmation showed, and
// only if it is still low-risk; the flash counts what was approved and
// what was not.
func (s *Server) handleQueueBulkApprove(c echo.Context) error {
	ctx := c.Request().Context()
	u, _ := currentUser(c)
	ids, err := bulkIDs(c)
	if err != nil {
		return err
	}
	approved, skipped := 0, 0
	policies := policyCache{}
	for _, id := range ids {
		card, err := s.cfg.Control.Card(ctx, id)
		if apperr.Is(err, apperr.NotFound) {
			skipped++
			continue
		}
		if err != nil {
			return err
		}
		if !s.cardView(ctx, card, u, policies).LowRisk {
			skipped++
			continue
		}
		version, _ := strconv.ParseInt(c.FormValue("v_"+id), 10, 32)
		hash, _ := hex.DecodeString(c.FormValue("h_" + id))
		if _, err := s.cfg.Control.ApproveArgs(ctx, actorOf(u), id, int32(version), hash); err != nil {
			if _, decided := apperr.As(err); !decided {
				return err
			}
			skipped++
			continue
		}
		approved++
	}
	msg := fmt.Sprintf("Approved %d request(s).", approved)
	if skipped > 0 {
		msg += fmt.Sprintf(" %d changed or were decided meanwhile and were left as they are.", skipped)
	}
	setFlash(c, msg, skipped > 0 && approved == 0)
	return seeOther(c, "/queue")
}

// bulkIDs reads the chosen cards of a bulk approval: 1 to bulkMax ids.
func bulkIDs(c echo.Context) ([]string, error) {
	form, err := c.FormParams()
	if err != nil {
		return nil, err
	}
	ids := form["id"]
	if len(ids) == 0 || len(ids) > bulkMax {
		return nil, apperr.InvalidFields(map[string]string{"id": fmt.Sprintf("choose between 1 and %d requests", bulkMax)})
	}
	return ids, nil
}
