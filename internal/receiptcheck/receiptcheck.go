// Package receiptcheck checks a signed receipt offline, as `countersign
// receipts verify` does: the signature against a key set
// (receipts.VerifyWithKeys), the staff approvals it carries and the
// customer's consent, and says in words what it proves. The command reads
// the files and prints; the pages' tests call the same check on receipts
// fetched from the console.
package receiptcheck

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"countersign/internal/receipts"
)

// Checked is a receipt whose signature and evidence hold.
type Checked struct {
	// Header is the JWS header; Claims the signed claims.
	Header receipts.Header
	Claims json.RawMessage
	// Approvals and Consent are the facts checkApprovals and checkConsent
	// established, one a line.
	Approvals []string
	Consent   []string
	// Trail is what checkTrail established of the trail proof.
	Trail []string
}

// Invalid is why a receipt proves nothing: Reason is what the command
// prints after "NOT VALID: "; Err, when set, is the receipts package's
// error (errors.Is with receipts.ErrSignature and the others).
type Invalid struct {
	Reason string
	Err    error
}

func (e *Invalid) Error() string { return e.Reason }

func (e *Invalid) Unwrap() error { return e.Err }

// Check verifies receipt — the compact JWS, or the JSON answer of GET
// /api/v1/invocations/{id}/receipt — against the JSON Web Key Set jwks:
// the signature, then every staff approval's evidence and the customer's
// consent. It returns the receipt, or an *Invalid saying why not. The
// trail proof it may carry is not checked (CheckWithTrail does).
func Check(receipt, jwks []byte) (Checked, error) { return CheckWithTrail(receipt, jwks, nil) }

// CheckWithTrail is Check, then the receipt's trail proof against the
// audit trail's verifier key auditKey (internal/audit, GET /audit/key):
// its checkpoint is that key's and every leaf of the write is in it. With
// a nil auditKey the proof is not checked.
func CheckWithTrail(receipt, jwks []byte, auditKey note.Verifier) (Checked, error) {
	header, claims, err := receipts.VerifyWithKeys(receiptJWS(receipt), jwks)
	if err != nil {
		return Checked{}, &Invalid{Reason: strings.TrimPrefix(err.Error(), "receipts: "), Err: err}
	}
	approvals, err := checkApprovals(claims)
	if err != nil {
		return Checked{}, &Invalid{Reason: fmt.Sprintf("signed with key %s, but %v", header.Kid, err)}
	}
	consented, err := checkConsent(claims)
	if err != nil {
		return Checked{}, &Invalid{Reason: fmt.Sprintf("signed with key %s, but %v", header.Kid, err)}
	}
	trail, err := checkTrail(claims, auditKey)
	if err != nil {
		return Checked{}, &Invalid{Reason: fmt.Sprintf("signed with key %s, but %v", header.Kid, err), Err: err}
	}
	return Checked{Header: header, Claims: claims, Approvals: approvals, Consent: consented, Trail: trail}, nil
}

// Write prints what the receipt says, as the command does: VALID and the
// key (of keysFrom, where the key set came from), the claims in words one
// fact a line, then the approvals' and the consent's facts.
func (c Checked) Write(w io.Writer, keysFrom string) {
	fmt.Fprintf(w, "VALID: signed with EdDSA by key %s of %s\n", c.Header.Kid, keysFrom)
	describeReceipt(w, c.Claims)
	for _, line := range c.Approvals {
		fmt.Fprintf(w, "%-13s %s\n", "Approval:", line)
	}
	for _, line := range c.Consent {
		fmt.Fprintf(w, "%-13s %s\n", "Consent:", line)
	}
	for _, line := range c.Trail {
		fmt.Fprintf(w, "%-13s %s\n", "Trail:", line)
	}
}
