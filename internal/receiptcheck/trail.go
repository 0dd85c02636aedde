package receiptcheck

import (
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/mod/sumdb/note"

	"countersign/internal/audit"
)

// checkTrail checks the trail proof a receipt carries (its "trail" claim)
// against the trail's verifier key v, and says what it proves. Without v,
// a proof carried is reported unchecked; with v, a receipt without one is
// refused, since the caller asked for the trail to be checked.
func checkTrail(claims json.RawMessage, v note.Verifier) ([]string, error) {
	var c struct {
		Subject string            `json:"sub"`
		Trail   *audit.WriteProof `json:"trail"`
	}
	if err := json.Unmarshal(claims, &c); err != nil {
		return nil, fmt.Errorf("its claims are not a receipt's: %w", err)
	}
	switch {
	case c.Trail == nil && v == nil:
		return []string{"none carried (issued by a console without an audit key, or before receipts carried one)"}, nil
	case c.Trail == nil:
		return nil, fmt.Errorf("trail: the receipt carries no proof of its write (issued by a console without an audit key, or before receipts carried one)")
	case v == nil:
		return []string{fmt.Sprintf("%d leaves with proofs, not checked (give -audit-key to check them)", len(c.Trail.Leaves))}, nil
	}
	cp, err := audit.VerifyWriteProof(*c.Trail, c.Subject, v)
	if err != nil {
		return nil, err
	}
	first, last := c.Trail.Leaves[0].Index, c.Trail.Leaves[len(c.Trail.Leaves)-1].Index
	return []string{fmt.Sprintf("%d leaves of this write (%d to %d) are in the checkpoint of size %d signed by %s at %s",
		len(c.Trail.Leaves), first, last, cp.Size, v.Name(), cp.Time.UTC().Format(time.RFC3339))}, nil
}
