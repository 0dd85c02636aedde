package confirmation

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"countersign/internal/apperr"
	"countersign/internal/consent"
	"countersign/internal/controlplane"
	"countersign/store"
)

// MailProblem says why a mail link proves nothing.
type MailProblem string

// The problems a mail link can have, each with its own page.
const (
	// MailUnknown: no such link was mailed here (mistyped, cut short, or
	// cleaned up long after it ended).
	MailUnknown MailProblem = "unknown"
	// MailExpired: its time ran out before it was used.
	MailExpired MailProblem = "expired"
	// MailSpent: it was used already; a link works once, so a forwarded
	// link opened a second time proves nothing.
	MailSpent MailProblem = "spent"
	// MailChanged: the request was quoted again since the mail; the link
	// was for the quote it showed.
	MailChanged MailProblem = "changed"
	// MailDecided: the request no longer awaits the customer, nor does
	// the newest quote that replaced it.
	MailDecided MailProblem = "decided"
)

// MailLinkError is the refusal of a mail link. For MailChanged, Was is the
// request the mail showed and Now the one that replaced it (nil when none
// did), so the page can say what changed, and NowMail whether the request
// as it stands now was mailed to the customer (MailOf), so the page says
// "we e-mailed you" only when it was.
type MailLinkError struct {
	Problem MailProblem
	Was     *controlplane.Invocation
	Now     *controlplane.Invocation
	NowMail MailDelivery
}

func (e *MailLinkError) Error() string { return "confirmation: mail link " + string(e.Problem) }

// AsMailLinkError finds a *MailLinkError in err's chain.
func AsMailLinkError(err error) (*MailLinkError, bool) {
	var me *MailLinkError
	ok := errors.As(err, &me)
	return me, ok
}

// MailOpened is a live mail link, looked at (OpenMailLink) or spent
// (SpendMailLink, SpendOpened): Opened is its request as its confirmation
// link opens it.
type MailOpened struct {
	Opened
	// Invocation is the link's request as the look read it, so a page
	// need not read it again.
	Invocation controlplane.Invocation
	// tokenHash names the link for SpendOpened.
	tokenHash []byte
}

// OpenMailLink checks a mail link without spending it: what the GET shows
// before the button. It fails with *MailLinkError saying why the link
// proves nothing; a database failure is returned as is.
func (s *Service) OpenMailLink(ctx context.Context, token string) (MailOpened, error) {
	row, err := s.mailRow(ctx, token)
	if err != nil {
		return MailOpened{}, err
	}
	return s.checkMailLink(ctx, row)
}

// SpendMailLink spends a live mail link, once, and returns the request it
// proves the customer for (ProvedOn with ProofLink): OpenMailLink, then
// SpendOpened.
func (s *Service) SpendMailLink(ctx context.Context, token string) (MailOpened, error) {
	m, err := s.OpenMailLink(ctx, token)
	if err != nil {
		return MailOpened{}, err
	}
	return s.SpendOpened(ctx, m)
}

// SpendOpened spends the mail link m, as OpenMailLink found it live,
// once: a second spend, even a concurrent one, is MailSpent, and a link
// retired (its request quoted again) or expired since the look is refused
// as OpenMailLink would refuse it now, unspent. The look read the request
// and checked the link against it (the version, the quote, the system's
// proofs); the one guarded UPDATE then decides, and the request is read
// again only to say why a spend was refused.
func (s *Service) SpendOpened(ctx context.Context, m MailOpened) (MailOpened, error) {
	spent, err := s.store.SpendMailLink(ctx, m.tokenHash, s.now())
	if errors.Is(err, store.ErrNotLive) {
		// Spent, retired or expired meanwhile: say which.
		_, err = s.checkMailLink(ctx, spent)
		if err == nil {
			err = &MailLinkError{Problem: MailSpent}
		}
		return MailOpened{}, err
	}
	if err != nil {
		return MailOpened{}, err
	}
	return m, nil
}

// mailRow finds the mail link of token.
func (s *Service) mailRow(ctx context.Context, token string) (store.MailLink, error) {
	if len(token) != mailTokenLen || !urlSafe(token) {
		return store.MailLink{}, &MailLinkError{Problem: MailUnknown}
	}
	sum := sha256.Sum256([]byte(token))
	row, err := s.store.MailLinkByHash(ctx, sum[:])
	if errors.Is(err, store.ErrNotFound) {
		return store.MailLink{}, &MailLinkError{Problem: MailUnknown}
	}
	return row, err
}

// checkMailLink says whether row still proves anything: its request awaits
// the customer at the version and with the quote the mail showed (a
// changed one says what changed first, since that is what the customer
// needs to know), then it is unspent and unexpired. A spent link never
// says what changed: that page shows the quote as it stands now, and the
// browser holding a spent link may be anyone's a mail was forwarded to;
// the one that spent it is sent on to its request.
func (s *Service) checkMailLink(ctx context.Context, row store.MailLink) (MailOpened, error) {
	inv, err := s.cp.Invocation(ctx, row.InvocationID)
	if err != nil {
		return MailOpened{}, err
	}
	if inv.State != controlplane.AwaitingConfirmation || row.RetiredAt != nil {
		next, err := s.newest(ctx, inv.ID)
		switch {
		case err == nil && row.SpentAt != nil:
			return MailOpened{}, &MailLinkError{Problem: MailSpent, Was: &inv}
		case err == nil && !s.awaits(next):
			// The quote that replaced it was decided or ended: nothing
			// is left to ask the customer about.
			return MailOpened{}, &MailLinkError{Problem: MailDecided, Was: &inv}
		case err == nil:
			return MailOpened{}, s.changed(ctx, &inv, next)
		case !errors.Is(err, controlplane.ErrNoSuccessor):
			return MailOpened{}, err
		case row.RetiredAt != nil:
			return MailOpened{}, &MailLinkError{Problem: MailChanged, Was: &inv}
		}
		return MailOpened{}, &MailLinkError{Problem: MailDecided, Was: &inv}
	}
	digest, err := consent.QuoteDigest(inv.QuoteJSON)
	if err != nil {
		return MailOpened{}, fmt.Errorf("confirmation: quote of %s: %w", inv.ID, err)
	}
	if (inv.Version != row.Version || !bytes.Equal(digest, row.QuoteDigest)) && row.SpentAt == nil {
		return MailOpened{}, s.changed(ctx, nil, inv)
	}
	now := s.now()
	switch {
	case row.SpentAt != nil:
		return MailOpened{}, &MailLinkError{Problem: MailSpent, Was: &inv}
	case !now.Before(row.ExpiresAt) || !s.awaits(inv):
		return MailOpened{}, &MailLinkError{Problem: MailExpired, Was: &inv}
	}
	if !s.accepts(inv.System, ProofLink) {
		return MailOpened{}, apperr.New(apperr.Forbidden, "This request cannot be decided from a link we e-mailed.")
	}
	o := Opened{Selector: row.LinkSelector, InvocationID: inv.ID, TaskID: inv.TaskID, CustomerRef: row.CustomerRef,
		System: inv.System, Proofs: s.Accepts(inv.System), ExpiresAt: row.ExpiresAt}
	return MailOpened{Opened: o, Invocation: inv, tokenHash: row.TokenHash}, nil
}

// newest is the request that stands now for id, quoted again: its
// successor's successor and on, to the last (controlplane.MaxRequotes
// bound the chain). It is controlplane.ErrNoSuccessor when none replaced
// id.
func (s *Service) newest(ctx context.Context, id string) (controlplane.Invocation, error) {
	next, err := s.cp.Successor(ctx, id)
	for range controlplane.MaxRequotes {
		if err != nil {
			break
		}
		later, lerr := s.cp.Successor(ctx, next.ID)
		if errors.Is(lerr, controlplane.ErrNoSuccessor) {
			return next, nil
		}
		next, err = later, lerr
	}
	return next, err
}

// changed is the refusal of a mail link whose request now stands as now
// (was, when known, is the request the mail showed), saying whether now
// was mailed; a database failure is returned as is.
func (s *Service) changed(ctx context.Context, was *controlplane.Invocation, now controlplane.Invocation) error {
	mailed, err := s.MailOf(ctx, now)
	if err != nil {
		return err
	}
	return &MailLinkError{Problem: MailChanged, Was: was, Now: &now, NowMail: mailed}
}

// afterRequote retires the mail links of the request a fresh quote
// replaced — a link for the old quote then explains what changed and
// proves nothing — and hands the fresh quote's mail to the outbox: this
// instance's mail loop makes a pass at once, and the page does not wait
// on the mail server.
func (s *Service) afterRequote(ctx context.Context, old string) error {
	if err := s.store.RetireMailLinks(ctx, old, s.now()); err != nil {
		return err
	}
	s.wakeMailLoop()
	return nil
}
