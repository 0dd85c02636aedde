package controlplane

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	"countersign/internal/stepup"
)

// StaffApproval is one console user's approval of a request, as its audit
// trail and the step-up kept with it say: the first of two, or the one
// that approved it. A receipt carries them.
type StaffApproval struct {
	UserID int64
	Name   string
	// First is the first of two approvals (separation of duties).
	First bool
	// Identified is how the person was identified for it (the event's
	// identified_by).
	Identified Identification
	// Version and ArgsHash are what the person approved: the request's
	// version they decided at (0 for approvals recorded before it was
	// kept) and the approved arguments' SHA-256.
	Version  int32
	ArgsHash []byte
	At       time.Time
	// StepUp is the passkey assertion made for this approval, when the
	// person made one (nil otherwise).
	StepUp *stepup.Assertion
}

// StaffApprovals lists the staff approvals of inv's arguments as they are
// now (inv.ArgsHash: an approval of arguments edited since approved
// nothing that was sent), oldest first, each with the step-up assertion
// kept for it: the assertion of the same person for the same version and
// arguments.
func (s *Service) StaffApprovals(ctx context.Context, inv Invocation) ([]StaffApproval, error) {
	events, err := s.store.EventsForInvocation(ctx, inv.ID)
	if err != nil {
		return nil, err
	}
	ups, err := s.store.StepUpsOf(ctx, inv.ID)
	if err != nil {
		return nil, err
	}
	var out []StaffApproval
	for _, e := range events {
		first := e.Action == string(EventInvocationFirstApproval)
		if e.ActorKind != string(ActorUser) || (!first && e.Action != string(EventInvocationApproved)) {
			continue
		}
		var data struct {
			Name       string         `json:"actor_name"`
			Identified Identification `json:"identified_by"`
			ArgsHash   string         `json:"args_hash"`
			Version    int32          `json:"version"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil {
			return nil, err
		}
		a := StaffApproval{Name: data.Name, First: first, Identified: data.Identified.recorded(), Version: data.Version, At: e.At}
		a.UserID, _ = strconv.ParseInt(e.ActorID, 10, 64)
		if a.ArgsHash, _ = hex.DecodeString(data.ArgsHash); !bytes.Equal(a.ArgsHash, inv.ArgsHash) {
			continue
		}
		for _, u := range ups {
			if u.UserID == a.UserID && u.Version == a.Version && bytes.Equal(u.ArgsHash, a.ArgsHash) {
				a.StepUp = &stepup.Assertion{CredentialID: u.CredentialID, PublicKey: u.PublicKey, RPID: u.RPID, Origin: u.Origin,
					AuthenticatorData: u.AuthenticatorData, ClientDataJSON: u.ClientDataJSON, Signature: u.Signature}
			}
		}
		out = append(out, a)
	}
	return out, nil
}
