package controlplane_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store/dbtest"
)

// TestChangePolicyRules: only managers and admins change a policy, a
// reason is required, the change and its audit event commit together, a
// stale version is a conflict, and the what-if replays past proposals.
func TestChangePolicyRules(t *testing.T) {
	t.Parallel()
	b := setup(t)
	current, err := b.cp.Policy(b.ctx, "shop", "issue_refund")
	if err != nil {
		t.Fatal(err)
	}
	draft := current
	draft.Stage = controlplane.StageAutonomous
	manager := controlplane.UserActor(b.owner, "manager", "Mo Manager")

	if _, err := b.cp.ChangePolicy(b.ctx, b.agent, draft, current.Version, "agents may not"); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("agent: %v, want forbidden", err)
	}
	if _, err := b.cp.ChangePolicy(b.ctx, b.assistant, draft, current.Version, "nor assistants"); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("assistant: %v, want forbidden", err)
	}
	if _, err := b.cp.ChangePolicy(b.ctx, manager, draft, current.Version, " "); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("no reason: %v, want invalid", err)
	}
	if n, _ := dbtest.CountEvents(b.ctx, b.store.Pool(), string(controlplane.EventPolicyChanged), nil); n != 0 {
		t.Fatalf("%d events after refused changes", n)
	}

	// One $15 proposal in the last 30 days: under the draft it runs alone.
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	b.propose(task, "issue_refund", refund(b.order(2).ID, 1500, "damaged"), "")
	w, err := b.cp.PolicyWhatIf(b.ctx, draft, 30)
	if err != nil {
		t.Fatal(err)
	}
	if w.Proposals != 1 || w.Auto != 1 || w.AutoCents != 1500 || w.Approval != 0 {
		t.Errorf("what-if: %+v", w)
	}
	off := draft
	off.Enabled = false
	if w, _ := b.cp.PolicyWhatIf(b.ctx, off, 30); w.Refused != 1 || w.RefusedCents != 1500 {
		t.Errorf("what-if switched off: %+v", w)
	}

	changed, err := b.cp.ChangePolicy(b.ctx, manager, draft, current.Version, "small refunds were always approved")
	if err != nil {
		t.Fatal(err)
	}
	if changed.Version != current.Version+1 || changed.Stage != controlplane.StageAutonomous {
		t.Errorf("changed: %+v", changed)
	}
	var data struct {
		Reason string         `json:"reason"`
		Before map[string]any `json:"before"`
		After  map[string]any `json:"after"`
	}
	var actor string
	row := b.store.Pool().QueryRow(b.ctx, `SELECT actor_id, data FROM events WHERE action = $1`, controlplane.EventPolicyChanged)
	var raw []byte
	if err := row.Scan(&actor, &raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatal(err)
	}
	if actor != fmt.Sprint(b.owner) || data.Reason != "small refunds were always approved" ||
		data.Before["stage"] != float64(3) || data.After["stage"] != float64(5) {
		t.Errorf("event by %s: %+v", actor, data)
	}
	if _, err := b.cp.ChangePolicy(b.ctx, manager, draft, current.Version, "again, from a stale form"); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("stale version: %v, want conflict", err)
	}
}
