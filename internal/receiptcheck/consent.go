package receiptcheck

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"countersign/internal/adapter"
	"countersign/internal/consent"
	"countersign/internal/money"
)

// receiptConsent is what checkConsent reads of a receipt's consent
// (web/api's consentJSON).
type receiptConsent struct {
	consent.Evidence
	Customer string          `json:"customer"`
	Quote    json.RawMessage `json:"quote"`
	ArgsHash string          `json:"args_hash"`
}

// proofWords says how a customer proved who they are, for "… confirmed
// <how> the quote".
var proofWords = map[string]string{
	"link":      "with the link from their mailbox",
	"code":      "with a code e-mailed to them",
	"account":   "signed in to their account",
	"assertion": "signed in on the business's own site",
	"passkey":   "with their passkey",
}

// checkConsent checks, offline, the customer's decision a receipt whose
// signature holds carries, and the arguments it says were sent:
//
//   - args_digest, when present, is the SHA-256 of the canonical args;
//   - the consent's quote_digest is the digest of the quote it carries
//     (consent.QuoteDigest, recomputed here);
//   - the quote matches the arguments sent: the arguments it was made
//     from (args_hash) are the ones sent, and its target is the
//     receipt's (kind and id). A quote does not carry its arguments
//     (adapter.Quote is what the dry run said in words), so what ties the
//     two is the signed record that this quote was made from arguments
//     with this hash;
//   - the decision is a confirmation (a receipt is of a write that
//     left, and only a yes lets one leave);
//   - a passkey assertion, when present, was made for this decision on
//     this quote (consent.Evidence.Verify), and is present exactly when
//     the proof is "passkey".
//
// It returns a line for each fact, the first saying who said yes, how
// and to what, or the reason the receipt is not evidence of its consent.
func checkConsent(raw json.RawMessage) ([]string, error) {
	var c struct {
		Subject    string          `json:"sub"`
		Args       json.RawMessage `json:"args"`
		ArgsDigest string          `json:"args_digest"`
		Target     struct {
			Kind string `json:"kind"`
			ID   string `json:"id"`
		} `json:"target"`
		Consent *receiptConsent `json:"consent"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("the consent cannot be read: %w", err)
	}
	sent, recomputed := adapter.ArgsHash(c.Args)
	var lines []string
	if c.ArgsDigest != "" {
		if !recomputed || hex.EncodeToString(sent) != c.ArgsDigest {
			return nil, fmt.Errorf("the arguments were changed: they hash to %x, and args_digest says %s", sent, c.ArgsDigest)
		}
		lines = append(lines, "the arguments hash to args_digest "+c.ArgsDigest)
	}
	e := c.Consent
	if e == nil {
		return lines, nil
	}
	digest, err := consent.QuoteDigest(e.Quote)
	if err != nil || !bytes.Equal(digest, e.QuoteDigest) {
		return nil, fmt.Errorf("the quote digest does not hold: the quote carried hashes to %x, and the customer was shown a quote hashing to %x", digest, []byte(e.QuoteDigest))
	}
	var q adapter.Quote
	if err := json.Unmarshal(e.Quote, &q); err != nil {
		return nil, fmt.Errorf("the quote cannot be read: %w", err)
	}
	if !recomputed || hex.EncodeToString(sent) != e.ArgsHash {
		return nil, fmt.Errorf("the arguments sent are not the ones the quote was made from: they hash to %x, the quote's to %s", sent, e.ArgsHash)
	}
	if q.Target.Kind != c.Target.Kind || q.Target.ID != c.Target.ID {
		return nil, fmt.Errorf("the quote is of %s %s, and the write was of %s %s", q.Target.Kind, q.Target.ID, c.Target.Kind, c.Target.ID)
	}
	how := proofWords[e.Proof]
	if how == "" {
		how = "with a proof of kind " + orNone(e.Proof)
	}
	var signed string
	if e.Passkey != nil || e.Proof == consent.ProofPasskey {
		if err := e.Verify(c.Subject, e.Quote); err != nil {
			return nil, fmt.Errorf("the customer's passkey assertion does not hold: %w", err)
		}
		signed = "the customer's passkey signed this decision on this quote: its signature holds"
	}
	// A receipt is of a write that left: the customer's decision it
	// carries is the yes that let it leave, or it is no evidence of one.
	if e.Decision != consent.Confirm {
		return nil, fmt.Errorf("the customer's recorded decision is %q, not a confirmation, so it let nothing leave", e.Decision)
	}
	lines = append(lines, fmt.Sprintf("%s confirmed %s the quote: %s", orNone(e.Customer), how, quoteWords(q)))
	if signed != "" {
		lines = append(lines, signed)
	}
	return append(lines, fmt.Sprintf("the quote (version %d) hashes to the digest the customer was shown, and was made from the arguments sent", e.QuoteVersion)), nil
}

// quoteWords is a quote in one line: its title, its lines from → to and
// its amount.
func quoteWords(q adapter.Quote) string {
	title := q.Title
	if q.Customer != nil && q.Customer.Title != "" {
		title = q.Customer.Title
	}
	parts := []string{title}
	for _, l := range q.Lines {
		switch {
		case l.From != "":
			parts = append(parts, fmt.Sprintf("%s: %s → %s", l.Label, l.From, l.To))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s", l.Label, l.To))
		}
	}
	if q.AmountCents != nil {
		parts = append(parts, "amount "+money.Format(*q.AmountCents, q.Currency))
	}
	return strings.Join(parts, "; ")
}
