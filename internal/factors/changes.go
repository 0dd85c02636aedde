package factors

import (
	"context"
	"errors"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// The kinds of second factor an audit event names.
const (
	KindTOTP          = "totp"
	KindPasskey       = "passkey"
	KindRecoveryCodes = "recovery_codes"
)

// factorEvent is the audit event of u's change to their own factors, by u
// identified as how: action, the factor's kind and, for a passkey, its
// name.
func (s *Service) factorEvent(u accounts.User, how controlplane.Identification, action controlplane.EventAction, kind, name string) (store.Event, error) {
	data := map[string]any{"kind": kind, "user_id": u.ID}
	if name != "" {
		data["name"] = name
	}
	by := controlplane.UserActor(u.ID, string(u.Role), u.Name).IdentifiedAs(how)
	return controlplane.AuditEvent(s.now(), by, action, "", "", data)
}

// errLastFactor answers a removal that would leave a person whose role
// requires a second factor without one.
func errLastFactor(what string) error {
	return &apperr.Error{Kind: apperr.Conflict, Code: "last_factor",
		Message: "Your role needs a second factor, and " + what + " is your last one.",
		Hint:    "Add a passkey or another authenticator first, then remove this one."}
}

// removeFactor deletes u's factor of kind, never the last one of a role
// that requires one (the store locks the person's factor rows before it
// counts), and records controlplane.EventFactorRemoved.
func (s *Service) removeFactor(ctx context.Context, u accounts.User, how controlplane.Identification, factorID int64, kind, name, what string) error {
	required, err := s.RequiredRoles(ctx)
	if err != nil {
		return err
	}
	e, err := s.factorEvent(u, how, controlplane.EventFactorRemoved, kind, name)
	if err != nil {
		return err
	}
	err = s.store.DeleteFactor(ctx, u.ID, factorID, kind, required[u.Role], e)
	switch {
	case errors.Is(err, store.ErrConflict):
		return errLastFactor(what)
	case errors.Is(err, store.ErrNotFound):
		return apperr.New(apperr.NotFound, "You have no such second factor.")
	}
	return err
}

// RemoveTOTP removes u's authenticator app (to replace it: remove, then
// set up the new one), as u identified as how. A person whose role
// requires a second factor cannot remove their last one (apperr.Conflict);
// one without an app gets apperr.NotFound.
func (s *Service) RemoveTOTP(ctx context.Context, u accounts.User, how controlplane.Identification) error {
	f, err := s.store.TOTPFactorOf(ctx, u.ID)
	if errors.Is(err, store.ErrNotFound) {
		return apperr.New(apperr.NotFound, "You have no authenticator app set up.")
	}
	if err != nil {
		return err
	}
	return s.removeFactor(ctx, u, how, f.ID, KindTOTP, "", "this app")
}

// RemovePasskey removes u's passkey factorID, as u identified as how. A
// person whose role requires a second factor cannot remove their last one
// (apperr.Conflict); another person's passkey, or none, is
// apperr.NotFound.
func (s *Service) RemovePasskey(ctx context.Context, u accounts.User, how controlplane.Identification, factorID int64) error {
	keys, err := s.store.PasskeysOf(ctx, u.ID)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.FactorID == factorID {
			return s.removeFactor(ctx, u, how, factorID, KindPasskey, k.Name, "this passkey")
		}
	}
	return apperr.New(apperr.NotFound, "You have no such passkey.")
}

// ResetFactors removes every second factor of person (apps, passkeys,
// recovery codes) for an admin, identified as how, when the person lost
// them, and ends all the person's sessions: their next sign-in of a role
// that requires a factor sets one up again. It records
// controlplane.EventFactorReset by the admin. Anyone but an enabled admin
// gets apperr.Forbidden; an admin's own factors are changed on their
// account page (apperr.Invalid); a person without any is apperr.NotFound.
func (s *Service) ResetFactors(ctx context.Context, admin accounts.User, how controlplane.Identification, person accounts.User) error {
	if admin.Role != accounts.Admin || admin.Disabled() {
		return apperr.New(apperr.Forbidden, "Only an admin can reset someone's second factor.")
	}
	if admin.ID == person.ID {
		return apperr.New(apperr.Invalid, "Change your own second factors on your account page.")
	}
	by := controlplane.UserActor(admin.ID, string(admin.Role), admin.Name).IdentifiedAs(how)
	e, err := controlplane.AuditEvent(s.now(), by, controlplane.EventFactorReset, "", "",
		map[string]any{"user_id": person.ID, "user_name": person.Name})
	if err != nil {
		return err
	}
	if _, err := s.store.ResetFactors(ctx, person.ID, e); errors.Is(err, store.ErrNotFound) {
		return apperr.New(apperr.NotFound, "%s has no second factor to reset.", person.Name)
	} else if err != nil {
		return err
	}
	return nil
}
