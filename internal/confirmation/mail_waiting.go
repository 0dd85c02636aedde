package confirmation

import (
	"context"
	"fmt"
	"slices"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// The customer's mail goes out by itself: when a request starts waiting
// for its customer, MailWaiting (run on an interval by every console
// instance) mails the whole quote with a "Review and decide" link to the
// contact on file, once per request version, as the link page's button
// would. It is an outbox: a version is claimed in PostgreSQL before its
// mail is sent (customer_mail_outbox), so instances racing send one mail,
// and a claim whose instance died is taken again after MailLease. A mail
// a person already asked for on the page counts as the version's. A
// re-quote's fresh request is mailed here too: the confirmation that
// made it wakes the loop rather than waiting on the mail server. These mails count against none of the limits on mails
// people ask for (CodeLimits): one per version, they are bounded by the
// proposals. A request that cannot be mailed (no contact on file, the
// mail server) is tried again later, never in a loop.

// MailLease is how long one instance holds a request's mail while sending
// it; an instance that died holding it is relieved after that.
const MailLease = 5 * time.Minute

// When an unprompted mail could not be sent, the next try waits: for a
// contact to appear, or, after the mail server failed, a back-off that
// doubles.
const (
	retryAfterNoContact = time.Hour
	retryFirst          = 30 * time.Second
	retryMost           = time.Hour
)

// mailWaitingBatch bounds how many requests one pass mails.
const mailWaitingBatch = 100

// MailWaiting mails each request awaiting its customer whose current
// version had no mail yet — where its system takes the mail link — and
// returns how many mails it sent. It sends nothing when no mail server is
// configured. An error is the database's; a mail that could not go is
// logged and tried again later.
func (s *Service) MailWaiting(ctx context.Context) (int, error) {
	sys, some := s.mailSystems()
	if s.cfg.Mail == nil || !some {
		return 0, nil
	}
	due, err := s.store.MailsDue(ctx, s.now(), sys, mailWaitingBatch)
	if err != nil {
		return 0, err
	}
	sent := 0
	for _, d := range due {
		ok, err := s.mailUnprompted(ctx, d)
		if err != nil {
			return sent, err
		}
		if ok {
			sent++
		}
	}
	return sent, nil
}

// RunMailWaiting runs MailWaiting now and then every interval until ctx
// ends, logging what fails; a re-quote on this instance asks for a pass
// at once (its mail is the outbox's, not the page's).
func (s *Service) RunMailWaiting(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if n, err := s.MailWaiting(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Log.Warn("customer mails: looking for requests to mail failed", "error", err)
		} else if n > 0 {
			s.cfg.Log.Info("customer mails sent", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
	}
}

// mailSystems is which systems' requests MailWaiting mails: those whose
// proofs include the mail link. some is false when none does.
func (s *Service) mailSystems() (sys store.MailSystems, some bool) {
	sys.All = slices.Contains(s.cfg.Proofs["*"], ProofLink)
	for name := range s.cfg.Proofs {
		if name == "*" || s.accepts(name, ProofLink) == sys.All {
			continue
		}
		if sys.All {
			sys.Except = append(sys.Except, name)
		} else {
			sys.Only = append(sys.Only, name)
		}
	}
	return sys, sys.All || len(sys.Only) > 0
}

// mailUnprompted claims d's version and, holding it, mails its quote with
// a link, in the language an earlier attempt wrote it in if one did (the
// outbox keeps it, so a mail queued in French goes out in French); it
// reports whether the mail went. It returns false without an error when
// another instance holds the version, it went already or its back-off
// has not ended; the mail's own failures are recorded and logged, and
// only the database's are returned.
func (s *Service) mailUnprompted(ctx context.Context, d store.MailDue) (bool, error) {
	now := s.now()
	attempt, kept, ok, err := s.store.ClaimCustomerMail(ctx, d.InvocationID, d.Version, now, now.Add(MailLease))
	if err != nil || !ok {
		return false, err
	}
	inv, err := s.cp.Invocation(ctx, d.InvocationID)
	if err == nil && inv.Version != d.Version {
		// The request moved on since it was listed: its new version, if
		// it still awaits the customer, is listed on its own.
		err = NothingToDecide()
	}
	var written SentLink
	if err == nil {
		o := Opened{Selector: d.LinkSelector, InvocationID: d.InvocationID, TaskID: d.TaskID, CustomerRef: d.CustomerRef,
			System: d.System, ExpiresAt: d.LinkExpiresAt}
		written, err = s.mailLink(ctx, o, inv, true, kept)
	}
	outcome, next := s.mailOutcome(err, attempt, now)
	var sentAt *time.Time
	if err == nil {
		sentAt = &now
	}
	if ferr := s.store.FinishCustomerMail(ctx, d.InvocationID, d.Version, outcome, sentAt, next, s.now(), written.Locale); ferr != nil {
		return err == nil, ferr
	}
	return err == nil, nil
}

// mailOutcome names how an unprompted mail ended and when the next try
// may be, logging what went wrong in words.
func (s *Service) mailOutcome(err error, attempt int, now time.Time) (outcome string, next time.Time) {
	if err == nil {
		return "sent", now
	}
	code, wait := "failed", retryFirst<<min(attempt-1, 7)
	if e, ok := apperr.As(err); ok && e.Code != "" {
		code = e.Code
	}
	switch code {
	case "no_contact_on_file":
		wait = retryAfterNoContact
	case "nothing_to_decide":
		return code, now.Add(MailLease)
	}
	wait = min(wait, retryMost)
	next = now.Add(wait)
	s.cfg.Log.Warn(fmt.Sprintf("customer mail not sent (%s); trying again at %s", code, next.UTC().Format(time.RFC3339)),
		"outcome", code, "attempt", attempt, "error", err)
	return code, next
}

// MailDelivery says whether a request version's mail with its link went.
type MailDelivery string

// What a request version's mail did.
const (
	// MailSent: a mail with its link went (asked for, or the console's).
	MailSent MailDelivery = "sent"
	// MailQueued: the console's mail loop is to send it and has not
	// failed at it yet.
	MailQueued MailDelivery = "queued"
	// MailNotSent: no mail went and none is on its way (no mail server,
	// the system does not take the mail link, no contact on file, the
	// mail server failed, the request no longer awaits the customer).
	MailNotSent MailDelivery = ""
)

// MailOf says whether inv's current version was mailed to its customer
// with a link, or is about to be: what a page may tell the customer.
func (s *Service) MailOf(ctx context.Context, inv controlplane.Invocation) (MailDelivery, error) {
	if !s.awaits(inv) || !s.accepts(inv.System, ProofLink) {
		return MailNotSent, nil
	}
	m, err := s.store.MailOfVersion(ctx, inv.ID, inv.Version)
	switch {
	case err != nil:
		return MailNotSent, err
	case m.Sent:
		return MailSent, nil
	case s.cfg.Mail != nil && m.Outcome == "":
		return MailQueued, nil
	}
	return MailNotSent, nil
}

// wakeMailLoop asks this instance's mail loop for a pass now; a pass
// already asked for is enough.
func (s *Service) wakeMailLoop() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
