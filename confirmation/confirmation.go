// Package confirmation issues and checks the customer's confirmation
// links. A link carries a single-purpose token "<selector>.<verifier>" (96
// and 256 random bits) bound to one invocation and one customer and
// expiring with the invocation's deadline; only the verifier's SHA-256 is
// stored. Opening a link uses it: it starts a customer session, and the
// same token never opens anything again.
package confirmation

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"countersign/adapter"
	"countersign/apperr"
	"countersign/controlplane"
	"countersign/store"
)

// Service makes and redeems confirmation links.
type Service struct {
	store *store.Store
	cp    *controlplane.Service
	now   func() time.Time
}

// New builds the service; now is the clock (time.Now when nil).
func New(st *store.Store, cp *controlplane.Service, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, cp: cp, now: now}
}

// PathPrefix is where links live on the console: "/c/<token>".
const PathPrefix = "/c/"

const (
	selectorBytes = 12
	verifierBytes = 32
)

var (
	selectorLen = base64.RawURLEncoding.EncodedLen(selectorBytes)
	verifierLen = base64.RawURLEncoding.EncodedLen(verifierBytes)
)

// Link makes a new link for the customer to confirm or decline inv and
// returns its path ("/c/<token>"). The invocation must await the customer's
// confirmation and belong to a task of customerRef; the link expires with
// the invocation's deadline. It fails with apperr.NotFound for another
// customer's invocation and apperr.IllegalTransition for one not awaiting
// confirmation.
func (s *Service) Link(ctx context.Context, inv controlplane.Invocation, customerRef string) (string, error) {
	task, err := s.cp.Task(ctx, inv.TaskID)
	if err != nil {
		return "", err
	}
	customerRef = adapter.NormaliseCustomerRef(customerRef)
	if task.CustomerRef != customerRef {
		return "", apperr.New(apperr.NotFound, "This request is not this customer's.")
	}
	if inv.State != controlplane.AwaitingConfirmation || inv.DeadlineAt == nil {
		return "", apperr.New(apperr.IllegalTransition, "Only a request awaiting the customer's confirmation gets a link (this one is %s).",
			inv.State.Label())
	}
	selector, verifier := random(selectorBytes), random(verifierBytes)
	sum := sha256.Sum256([]byte(verifier))
	err = s.store.InsertConfirmationLink(ctx, store.ConfirmationLink{Selector: selector, VerifierHash: sum[:],
		InvocationID: inv.ID, CustomerRef: customerRef, ExpiresAt: *inv.DeadlineAt, CreatedAt: s.now()})
	if err != nil {
		return "", fmt.Errorf("confirmation: link for %s: %w", inv.ID, err)
	}
	return PathPrefix + selector + "." + verifier, nil
}

// Problem says why a link does not open.
type Problem string

// The problems a link can have, each with its own page.
const (
	// Unknown: well formed, but no such link was ever issued here.
	Unknown Problem = "unknown"
	// Tampered: damaged or altered (cut short in a copy, a character changed).
	Tampered Problem = "tampered"
	// Expired: its invocation's deadline passed.
	Expired Problem = "expired"
	// Used: it was opened already; a link opens once.
	Used Problem = "used"
	// Foreign: it belongs to another customer than the one this browser is
	// signed in as.
	Foreign Problem = "foreign"
)

// LinkError is the refusal of a link. InvocationID and CustomerRef are set
// when the link was found (used, expired, foreign), so the caller can send
// its own customer on to the request; they are never shown to anyone else.
type LinkError struct {
	Problem      Problem
	InvocationID string
	CustomerRef  string
}

func (e *LinkError) Error() string { return "confirmation: link " + string(e.Problem) }

// AsLinkError finds a *LinkError in err's chain.
func AsLinkError(err error) (*LinkError, bool) {
	var le *LinkError
	ok := errors.As(err, &le)
	return le, ok
}

// Redeemed is what an opened link grants: the customer and the invocation.
type Redeemed struct {
	InvocationID string
	CustomerRef  string
}

// Redeem checks token and uses it. holder is the customer this browser
// already acts for ("" when none; a console account of another role passes
// its own e-mail so the link counts as foreign). It fails with *LinkError
// saying which problem the link has; a database failure is returned as is.
// Two concurrent redemptions of one token: one succeeds, the other is Used.
func (s *Service) Redeem(ctx context.Context, token, holder string) (Redeemed, error) {
	selector, verifier, ok := strings.Cut(token, ".")
	if !ok || len(selector) != selectorLen || len(verifier) != verifierLen || !urlSafe(selector) || !urlSafe(verifier) {
		return Redeemed{}, &LinkError{Problem: Tampered}
	}
	row, err := s.store.ConfirmationLink(ctx, selector)
	if errors.Is(err, store.ErrNotFound) {
		return Redeemed{}, &LinkError{Problem: Unknown}
	}
	if err != nil {
		return Redeemed{}, err
	}
	sum := sha256.Sum256([]byte(verifier))
	if subtle.ConstantTimeCompare(sum[:], row.VerifierHash) != 1 {
		return Redeemed{}, &LinkError{Problem: Tampered}
	}
	found := &LinkError{InvocationID: row.InvocationID, CustomerRef: row.CustomerRef}
	switch {
	case holder != "" && adapter.NormaliseCustomerRef(holder) != row.CustomerRef:
		found.Problem = Foreign
		return Redeemed{}, found
	case row.UsedAt != nil:
		found.Problem = Used
		return Redeemed{}, found
	case !s.now().Before(row.ExpiresAt):
		found.Problem = Expired
		return Redeemed{}, found
	}
	if _, err := s.store.UseConfirmationLink(ctx, selector, s.now()); errors.Is(err, store.ErrConflict) {
		found.Problem = Used
		return Redeemed{}, found
	} else if err != nil {
		return Redeemed{}, err
	}
	return Redeemed{InvocationID: row.InvocationID, CustomerRef: row.CustomerRef}, nil
}

func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func urlSafe(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
