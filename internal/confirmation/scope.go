package confirmation

import (
	"context"
	"slices"
	"strings"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
)

// Proved is what a browser showed about who it is: the customer, how, and
// — for a mail link, a code or an assertion — the one request the proof was
// made on. A
// code read out in a chat, or an assertion copied from a page, must not give
// its holder the customer's other requests; only the customer's own
// signed-in account spans them, as a bank session does.
type Proved struct {
	CustomerRef string
	Proof       Proof
	// InvocationID and System name the request (its link's invocation) a
	// code or an assertion proved; empty for an account.
	InvocationID string
	System       string
	// Locale is the business's word for the customer's language that came
	// with the proof (an assertion's "loc"); empty otherwise.
	Locale string
}

// Spans reports whether the proof covers every request of its customer
// (a signed-in account) rather than one.
func (p Proved) Spans() bool { return p.Proof == ProofAccount }

// ProvedOn is the proof a code or an assertion made on link o.
func ProvedOn(o Opened, proof Proof) Proved {
	return Proved{CustomerRef: o.CustomerRef, Proof: proof, InvocationID: o.InvocationID, System: o.System, Locale: o.Locale}
}

// Covers checks that p may see inv, whose task's customer is
// taskCustomer. Another customer's request is apperr.NotFound, as if it did
// not exist. A code or an assertion covers the request it was made on and
// the re-quotes that replaced it (a confirm through
// controlplane.CustomerDecide closes a request whose target changed and
// carries it on as a fresh quote: the same request, asked again); any other request is apperr.Unauthenticated with
// code prove_for_this_request.
func (s *Service) Covers(ctx context.Context, p Proved, inv controlplane.Invocation, taskCustomer string) error {
	if !controlplane.SameCustomer(p.CustomerRef, taskCustomer) {
		return apperr.New(apperr.NotFound, "We could not find this request among yours.")
	}
	if p.Spans() {
		return nil
	}
	at := inv
	for range controlplane.MaxRequotes {
		if at.ID == p.InvocationID && at.System == p.System {
			return nil
		}
		if at.SupersedesID == "" {
			break
		}
		prev, err := s.cp.Invocation(ctx, at.SupersedesID)
		if err != nil {
			return err
		}
		at = prev
	}
	return ProveForThisRequest()
}

// ProveForThisRequest is the answer to a browser whose code or assertion
// was for another request: the control plane's own refusal, so the pages
// and the state machine say the same.
func ProveForThisRequest() error { return controlplane.ProveForThisRequest() }

// ProofAccepted checks that proof is one that system accepts
// (Config.Proofs; an assertion only where the system has a secret); it
// fails with apperr.Forbidden, code proof_not_accepted, naming the ways
// that system accepts.
func (s *Service) ProofAccepted(system string, proof Proof) error {
	accepted := s.Accepts(system)
	if slices.Contains(accepted, proof) {
		return nil
	}
	var words []string
	for _, p := range accepted {
		words = append(words, proofWords[p])
	}
	hint := "This request cannot be decided here; contact support."
	if len(words) > 0 {
		hint = "Show us it's you for this request with " + strings.Join(words, " or ") + "."
	}
	return &apperr.Error{Kind: apperr.Forbidden, Code: "proof_not_accepted",
		Message: "This request's business system does not accept the way you showed us it's you (" + proofWords[proof] + ").", Hint: hint}
}

var proofWords = map[Proof]string{
	ProofLink:      "the link in the e-mail we send you",
	ProofCode:      "a code we e-mail you",
	ProofAccount:   "your signed-in account",
	ProofAssertion: "the business's own website or app where you are signed in",
	ProofPasskey:   "the passkey you added for this business",
}

// Decide makes the customer's decision d with what the browser proved:
// the control plane's one call (controlplane.Service.CustomerDecide) loads
// the request, checks once that p may decide it — its customer, the
// request the proof was made on or a re-quote of it, and a proof the
// request's system accepts — and transitions.
func (s *Service) Decide(ctx context.Context, p Proved, d controlplane.CustomerDecision) (controlplane.CustomerDecided, error) {
	d.Actor = controlplane.CustomerProvedOn(adapter.NormaliseCustomerRef(p.CustomerRef), string(p.Proof), p.InvocationID)
	if p.Spans() {
		d.Actor.ProvedFor = ""
	}
	d.ProofAccepted = func(system string) error {
		if !p.Spans() && system != p.System {
			return ProveForThisRequest()
		}
		return s.ProofAccepted(system, p.Proof)
	}
	out, err := s.cp.CustomerDecide(ctx, d)
	if err == nil && out.Requoted {
		// The decision stands whatever the mail does; the customer is on
		// the page with the fresh quote.
		if err := s.afterRequote(ctx, d.InvocationID); err != nil {
			s.cfg.Log.Warn("retiring the mail links of a re-quoted request", "invocation_id", d.InvocationID, "error", err)
		}
	}
	return out, err
}

// MayDecide is what a page asks before it offers a decision — confirm,
// decline, stop (the decision itself is Decide's): p covers inv (Covers)
// and p's kind is among the proofs inv's system accepts (ProofAccepted). What the browser proved on
// another system's link, or with a kind this system does not take, decides
// nothing here.
func (s *Service) MayDecide(ctx context.Context, p Proved, inv controlplane.Invocation, taskCustomer string) error {
	if err := s.Covers(ctx, p, inv, taskCustomer); err != nil {
		return err
	}
	return s.ProofAccepted(inv.System, p.Proof)
}
