package receiptcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"countersign/internal/money"
)

// receiptJWS is the JWS of a receipt file: the file itself, or the
// "receipt" of GET /api/v1/invocations/{id}/receipt's answer.
func receiptJWS(raw []byte) string {
	var answer struct {
		Receipt string `json:"receipt"`
	}
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' && json.Unmarshal(t, &answer) == nil && answer.Receipt != "" {
		return answer.Receipt
	}
	return string(bytes.TrimSpace(raw))
}

// receiptClaims is what describeReceipt reads of a receipt's claims
// (web/api's receiptClaims, as JSON).
type receiptClaims struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	IssuedAt int64  `json:"iat"`
	TaskID   string `json:"task_id"`
	System   string `json:"system"`
	Action   string `json:"action"`
	State    string `json:"state"`
	Target   struct {
		Kind, ID, Display string
	} `json:"target"`
	Args   map[string]json.RawMessage `json:"args"`
	Result *struct {
		Reference      string `json:"reference"`
		ShortReference string `json:"short_reference"`
		AmountCents    *int64 `json:"amount_cents"`
		Currency       string `json:"currency"`
	} `json:"result"`
	Verification *struct {
		Verified bool      `json:"verified"`
		Evidence string    `json:"evidence"`
		At       time.Time `json:"at"`
	} `json:"verification"`
	CompletedAt *time.Time `json:"completed_at"`
}

// describeReceipt prints the claims in words, one fact a line.
func describeReceipt(w io.Writer, raw json.RawMessage) {
	var c receiptClaims
	if err := json.Unmarshal(raw, &c); err != nil {
		fmt.Fprintf(w, "claims (not a Countersign receipt's): %s\n", raw)
		return
	}
	line := func(label, format string, a ...any) {
		fmt.Fprintf(w, "%-13s %s\n", label+":", fmt.Sprintf(format, a...))
	}
	line("Invocation", "%s (task %s)", c.Subject, c.TaskID)
	line("System", "%s, action %s", c.System, c.Action)
	line("Target", "%s (%s %s)", c.Target.Display, c.Target.Kind, c.Target.ID)
	var changed []string
	for _, k := range slices.Sorted(maps.Keys(c.Args)) {
		changed = append(changed, k+" = "+string(c.Args[k]))
	}
	line("What changed", "%s", orNone(strings.Join(changed, ", ")))
	state := c.State
	if state == "reversed" {
		state += " (a compensation undid it since)"
	}
	// A receipt is signed once: it says the state when it was issued,
	// and a reversal made since does not change one already handed out.
	line("State", "%s, as of %s (a later reversal is not in this receipt: GET /api/v1/invocations/%s gives the state now)",
		state, time.Unix(c.IssuedAt, 0).UTC().Format(time.RFC3339), c.Subject)
	if c.Result != nil {
		ref := c.Result.Reference
		if c.Result.ShortReference != "" && c.Result.ShortReference != ref {
			ref += " (the customer's: " + c.Result.ShortReference + ")"
		}
		line("Reference", "%s", orNone(ref))
		if a := c.Result.AmountCents; a != nil {
			line("Amount", "%s (as the system recorded it)", money.Format(*a, c.Result.Currency))
		}
	}
	if v := c.Verification; v != nil {
		line("Verified at", "%s: %s", v.At.UTC().Format(time.RFC3339), v.Evidence)
	} else {
		line("Verified at", "none")
	}
	if c.CompletedAt != nil {
		line("Completed at", "%s", c.CompletedAt.UTC().Format(time.RFC3339))
	}
	line("Issued", "by %s at %s", orNone(c.Issuer), time.Unix(c.IssuedAt, 0).UTC().Format(time.RFC3339))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
