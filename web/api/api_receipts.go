package api

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/audit"
	"countersign/internal/controlplane"
	"countersign/internal/stepup"
)

// receiptClaims is what a receipt of a completed write says, signed: the
// invocation, what was changed where, with which arguments, who of the
// staff approved them and how they were identified, the system's
// reference and the read-back's evidence.
type receiptClaims struct {
	Issuer   string `json:"iss,omitempty"`
	Subject  string `json:"sub"`
	IssuedAt int64  `json:"iat"`
	TaskID   string `json:"task_id"`
	System   string `json:"system"`
	Action   string `json:"action"`
	// State is completed, or reversed when a compensation undid it since.
	State        string          `json:"state"`
	Target       targetJSON      `json:"target"`
	Args         json.RawMessage `json:"args"`
	Result       *resultJSON     `json:"result"`
	Verification *verifyJSON     `json:"verification"`
	CompletedAt  *time.Time      `json:"completed_at"`
	// Approvals are the staff's approvals of the arguments sent, oldest
	// first; empty when no person of the staff approved (the policy or
	// the customer did).
	Approvals []approvalJSON `json:"approvals"`
	// Consent is the customer's decision that let it leave, when a
	// customer decided: what they were shown and how they proved it.
	Consent *consentJSON `json:"consent,omitempty"`
	// ArgsDigest is the hex SHA-256 of Args in their canonical form.
	ArgsDigest string `json:"args_digest"`
	// Trail is the audit trail's proof of the write: a signed checkpoint
	// and the inclusion proof of each of the invocation's leaves; absent
	// when the console has no audit key (and in receipts issued before).
	Trail *audit.WriteProof `json:"trail,omitempty"`
}

// approvalJSON is one staff approval a receipt carries: who, how they
// were identified for it (the audit event's identified_by), the version
// and the arguments' SHA-256 (hex) they approved, and the passkey
// assertion made for it when the policy asked for step-up, which anyone
// can check offline (stepup.Assertion.Verify with sub, version and
// args_hash).
type approvalJSON struct {
	UserID       int64                       `json:"user_id"`
	Name         string                      `json:"name"`
	FirstOfTwo   bool                        `json:"first_of_two"`
	IdentifiedBy controlplane.Identification `json:"identified_by"`
	Version      int32                       `json:"version"`
	ArgsHash     string                      `json:"args_hash"`
	At           time.Time                   `json:"at"`
	StepUp       *stepup.Assertion           `json:"step_up,omitempty"`
}

// receiptJSON is the answer of GET /api/v1/invocations/{id}/receipt: the
// JWS, the id of the key that signed it, and its claims decoded.
type receiptJSON struct {
	Receipt string        `json:"receipt"`
	KeyID   string        `json:"kid"`
	Claims  receiptClaims `json:"claims"`
}

// handleAPIReceipt answers GET /api/v1/invocations/:id/receipt: the signed
// receipt of a completed (or since reversed) write; 409 not_completed
// before that.
func (h *Handler) handleAPIReceipt(c echo.Context) error {
	ctx := c.Request().Context()
	inv, _, err := h.cfg.Assistants.Invocation(ctx, currentAssistant(c), c.Param("id"))
	if err != nil {
		return err
	}
	if inv.State != controlplane.Completed && inv.State != controlplane.Reversed {
		return &apperr.Error{Kind: apperr.IllegalTransition, Code: "not_completed",
			Message: "A receipt is issued once the write is completed; this one is " + inv.State.Label() + ".",
			Hint:    "Follow the invocation until its state is completed, then ask again."}
	}
	jws, claims, err := h.receipt(ctx, inv)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, receiptJSON{Receipt: jws, KeyID: h.receipts.KeyID(), Claims: claims})
}

// Receipt is the signed receipt of a completed (or since reversed)
// invocation, the JWS GET /api/v1/invocations/{id}/receipt serves: the
// customer's pages offer the same to the customer whose request it is.
// The caller checks who may have it.
func (h *Handler) Receipt(ctx context.Context, inv controlplane.Invocation) (string, error) {
	jws, _, err := h.receipt(ctx, inv)
	return jws, err
}

func (h *Handler) receipt(ctx context.Context, inv controlplane.Invocation) (string, receiptClaims, error) {
	out := h.invocationOut(ctx, "", inv)
	approvals, err := h.cfg.Control.StaffApprovals(ctx, inv)
	if err != nil {
		return "", receiptClaims{}, err
	}
	// The issuer is the console's configured address, never the request's
	// Host header, which the caller chooses.
	claims := receiptClaims{Issuer: h.cfg.PublicBase, Subject: inv.ID, IssuedAt: h.Now().Unix(), TaskID: inv.TaskID, System: inv.System,
		Action: inv.Action, State: string(inv.State), Target: out.Target, Args: out.Args.Effective, Result: out.Result,
		Verification: out.Verification, CompletedAt: inv.FinishedAt, Approvals: []approvalJSON{}}
	for _, a := range approvals {
		claims.Approvals = append(claims.Approvals, approvalJSON{UserID: a.UserID, Name: a.Name, FirstOfTwo: a.First,
			IdentifiedBy: a.Identified, Version: a.Version, ArgsHash: hex.EncodeToString(a.ArgsHash), At: a.At, StepUp: a.StepUp})
	}
	claims.ArgsDigest = argsDigest(claims.Args)
	if claims.Consent, err = h.receiptConsent(ctx, inv); err != nil {
		return "", receiptClaims{}, err
	}
	if h.cfg.Audit != nil {
		if claims.Trail, err = h.cfg.Audit.ProveWrite(ctx, inv.ID); err != nil {
			return "", receiptClaims{}, err
		}
	}
	jws, err := h.receipts.Sign(claims)
	return jws, claims, err
}

// handleReceiptKeys answers GET /api/v1/receipts/jwks.json: the public key
// receipts are signed with, for anyone to verify them.
func (h *Handler) handleReceiptKeys(c echo.Context) error {
	return c.JSON(http.StatusOK, h.receipts.JWKS())
}
