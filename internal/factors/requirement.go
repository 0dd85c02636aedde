package factors

import (
	"context"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
)

// StaffRoles are the roles an admin may require a second factor of, in the
// order the admin page lists them.
var StaffRoles = []accounts.Role{accounts.Agent, accounts.Manager, accounts.Admin}

// RequiredRoles returns, per staff role, whether its sign-ins need a
// second factor.
func (s *Service) RequiredRoles(ctx context.Context) (map[accounts.Role]bool, error) {
	roles, err := s.store.RolesRequiringFactor(ctx)
	if err != nil {
		return nil, err
	}
	out := map[accounts.Role]bool{}
	for _, r := range roles {
		out[accounts.Role(r)] = true
	}
	return out, nil
}

// SetRequired makes role require a second factor, or not, for admin; the
// change and its audit event (controlplane.EventFactorRequirementChanged) commit
// together. Requiring one ends the role's people's sessions but keep (the
// hash of the admin's own, or nil), so none opened with a password alone
// stays. how is how the admin was identified, for the audit event. Anyone
// but an enabled admin gets apperr.Forbidden.
func (s *Service) SetRequired(ctx context.Context, admin accounts.User, how controlplane.Identification, role accounts.Role, required bool, keep []byte) error {
	if admin.Role != accounts.Admin || admin.Disabled() {
		return apperr.New(apperr.Forbidden, "Only an admin can choose which roles need a second factor.")
	}
	known := false
	for _, r := range StaffRoles {
		known = known || r == role
	}
	if !known {
		return apperr.InvalidFields(map[string]string{"role": "Choose one of: agent, manager, admin."})
	}
	by := controlplane.UserActor(admin.ID, string(admin.Role), admin.Name).IdentifiedAs(how)
	e, err := controlplane.AuditEvent(s.now(), by, controlplane.EventFactorRequirementChanged, "", "", map[string]any{"role": role, "required": required})
	if err != nil {
		return err
	}
	return s.store.SetRoleFactorRequired(ctx, string(role), required, admin.ID, keep, e)
}

// Step is what a password sign-in needs before the person gets a session.
type Step int

const (
	// NoStep: the password was enough.
	NoStep Step = iota
	// VerifyStep: the person has a second factor and must use it.
	VerifyStep
	// EnrolStep: the person's role requires a second factor they do not
	// have yet; they set one up before any page.
	EnrolStep
)

// StepAfterPassword says what u needs after a right password: a person
// with a factor uses it, whatever their role requires.
func (s *Service) StepAfterPassword(ctx context.Context, u accounts.User) (Step, error) {
	st, err := s.StatusOf(ctx, u.ID)
	if err != nil {
		return NoStep, err
	}
	if st.Any() {
		return VerifyStep, nil
	}
	required, err := s.RequiredRoles(ctx)
	if err != nil {
		return NoStep, err
	}
	if required[u.Role] {
		return EnrolStep, nil
	}
	return NoStep, nil
}
