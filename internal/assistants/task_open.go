package assistants

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
)

// TaskRequest is what an assistant asks for when it opens a task. A nil
// limit takes the task default (DefaultWriteBudget, …), lowered to the
// assistant's maximum when that is smaller.
type TaskRequest struct {
	CustomerRef    string
	ConversationID string
	Systems        []string
	AllowedActions []string
	WriteBudget    *int
	InflightLimit  *int
	RatePerMinute  *int
	ExpiresAt      *time.Time
	// CustomerAssertion is the task assertion the business's site signed
	// for this assistant and customer (confirmation.SignTaskAssertion).
	CustomerAssertion string
}

// The limits of a task that asks for none, and its lifetime.
const (
	DefaultWriteBudget   = 5
	DefaultInflightLimit = 2
	DefaultRatePerMinute = 10
	DefaultTaskLifetime  = 24 * time.Hour
)

// SetSiteSecrets sets the per-system secrets (CUSTOMER_ASSERTION_SECRETS)
// task assertions are checked with. It is called while wiring, before the
// service answers requests; a system without a secret cannot vouch.
func (s *Service) SetSiteSecrets(secrets map[string][]byte) { s.siteSecrets = maps.Clone(secrets) }

// OpenTask opens a task for the assistant within its grants. A limit
// above the assistant's maximum is an invalid-input error naming the
// field, the maximum and the fix. The customer must be vouched for: by a
// valid task assertion (which then limits the task to the system it
// names) or by the assistant's any-customer grant; otherwise Forbidden,
// code customer_not_vouched, the same answer for every customer, known
// to a system or not. The control plane's errors pass through.
func (s *Service) OpenTask(ctx context.Context, a Assistant, req TaskRequest) (controlplane.Task, error) {
	in := controlplane.NewTask{AssistantID: a.ID, CustomerRef: req.CustomerRef, ConversationID: req.ConversationID,
		Systems: req.Systems, AllowedActions: req.AllowedActions, ExpiresAt: s.now().Add(DefaultTaskLifetime)}
	if req.ExpiresAt != nil {
		in.ExpiresAt = *req.ExpiresAt
	}
	fields := map[string]string{}
	in.WriteBudget = withinMax(fields, "write_budget", req.WriteBudget, DefaultWriteBudget, a.Grants.MaxWriteBudget)
	in.InflightLimit = withinMax(fields, "inflight_limit", req.InflightLimit, DefaultInflightLimit, a.Grants.MaxInflightLimit)
	in.RatePerMinute = withinMax(fields, "rate_per_minute", req.RatePerMinute, DefaultRatePerMinute, a.Grants.MaxRatePerMinute)
	if len(fields) > 0 {
		return controlplane.Task{}, apperr.InvalidFields(fields)
	}
	vouch, systems, err := s.vouch(a, req)
	if err != nil {
		return controlplane.Task{}, err
	}
	in.Vouch = vouch
	if systems != nil {
		in.Systems = systems
	}
	return s.cp.CreateTask(ctx, a.Actor(), in)
}

// withinMax is the limit asked for, or the default lowered to the
// maximum; one above the maximum is noted in fields.
func withinMax(fields map[string]string, field string, asked *int, def, maximum int) int {
	if asked == nil {
		return min(def, maximum)
	}
	if *asked > maximum {
		fields[field] = fmt.Sprintf("at most %d for this assistant (the maximum an admin set); ask for %d or less, "+
			"or have an admin raise the maximum on /admin/assistants", maximum, maximum)
	}
	return *asked
}

// vouch decides how the task's customer is vouched for. A sent assertion
// is always checked, grant or not; it names one system, and the task is
// limited to it (systems, when not nil, replaces the task's systems).
func (s *Service) vouch(a Assistant, req TaskRequest) (controlplane.Vouch, []string, error) {
	signed := strings.TrimSpace(req.CustomerAssertion)
	if signed == "" {
		if a.Grants.AnyCustomer {
			return controlplane.Vouch{Kind: controlplane.VouchAnyCustomer}, nil, nil
		}
		return controlplane.Vouch{}, nil, controlplane.NotVouched("no customer_assertion was sent.")
	}
	as, why := confirmation.OpenTaskAssertion(s.siteSecrets, signed, s.now())
	switch {
	case why != "":
	case as.Aud != a.ID && !strings.EqualFold(as.Aud, a.Name):
		why = "it was made for another assistant."
	case !controlplane.SameCustomer(as.Sub, req.CustomerRef):
		why = "it names another customer."
	case len(req.Systems) > 1 || (len(req.Systems) == 1 && req.Systems[0] != as.Sys):
		why = fmt.Sprintf("it vouches for the customer of %s only; open the task for that system.", as.Sys)
	}
	if why != "" {
		return controlplane.Vouch{}, nil, controlplane.NotVouched("its customer_assertion was not accepted: " + why)
	}
	return controlplane.Vouch{Kind: controlplane.VouchAssertion, System: as.Sys, Nonce: as.Nonce,
		ExpiresAt: time.Unix(as.ExpiresAt, 0)}, []string{as.Sys}, nil
}
