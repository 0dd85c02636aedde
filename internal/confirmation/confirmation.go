// Package confirmation shows customers the requests that await their
// confirmation and checks that the person confirming is the customer.
//
// A link ("/c/<selector>.<verifier>") shows one request, rendered from its
// quote. It is not proof of anything: the assistant relays it, so the
// assistant holds it too. Opening it spends nothing (mail scanners and link
// previews fetch links). To confirm or decline, the person proves they are
// the customer in a way nothing the assistant holds can supply: a
// single-use link in a mail carrying the whole quote, sent to the contact
// the business system has on file (mail_link.go), a signed-in customer
// account, an assertion signed by the business's own site with a
// per-system secret, or — only where the business turns it on — a
// one-time code mailed to the contact on file. Which proofs a system
// accepts is configured; a code can be read out to whoever asks for it,
// so it is off by default.
//
// An invocation has one live link, made in the transaction that routes it
// to its customer (NewLink, through controlplane.LinkMinter). Reading the
// invocation shows that link and writes nothing (LiveLink); Rotate
// replaces it on purpose, and SweepLinks makes one a request lacks. Only the verifier's SHA-256
// is stored; the verifier itself is an HMAC of the selector under the link
// key, so the live link can be shown again without keeping it.
package confirmation

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/mail"
	"countersign/store"
)

// Proof is a way a customer shows they are the customer.
type Proof string

// The proofs a system may accept.
const (
	// ProofLink is the single-use link of a mail to the contact on file in
	// the business system, which carries the whole quote: whoever clicks
	// in the customer's mailbox is the customer, and lands on the quote.
	ProofLink Proof = "link"
	// ProofCode is a one-time code sent to the contact on file in the
	// business system (the adapter supplies it). It can be read out to an
	// assistant that asks for it, so a system takes it only when the
	// business turned it on.
	ProofCode Proof = "code"
	// ProofAccount is a signed-in customer account of the console whose
	// e-mail is the customer reference.
	ProofAccount Proof = controlplane.ProofAccount
	// ProofAssertion is a short-lived assertion signed by the business's own
	// site (HMAC-SHA256 with the system's secret), for chat widgets embedded
	// where the customer is already signed in.
	ProofAssertion Proof = "assertion"
	// ProofPasskey is a passkey the customer added for this system after a
	// decision proven by a link, an assertion or their account
	// (internal/custkeys); its assertion signs the one decision it makes.
	// A system whose proofs include the account accepts it too, unless it
	// is named on its own.
	ProofPasskey Proof = "passkey"
)

// Proofs lists every proof, in the order pages offer them.
var Proofs = []Proof{ProofLink, ProofCode, ProofAccount, ProofAssertion, ProofPasskey}

// DefaultProofs are the proofs of a system nothing configures: the mail
// link and the customer's account. No proof an assistant can obtain by
// asking the customer to read something out decides a request unless the
// business turned typed codes on for that system.
var DefaultProofs = []Proof{ProofLink, ProofAccount}

// ParseProof returns the proof named s.
func ParseProof(s string) (Proof, bool) {
	for _, p := range Proofs {
		if string(p) == s {
			return p, true
		}
	}
	return "", false
}

// Config says how customers prove themselves.
type Config struct {
	// Proofs are the proofs each system accepts, by system name; the entry
	// "*" applies to systems not named. Nil means DefaultProofs (the mail
	// link and the account) everywhere. An assertion needs the system's
	// secret too.
	Proofs map[string][]Proof
	// AssertionSecrets are the per-system secrets that sign customer
	// assertions. The business's site holds them; an assistant never does.
	AssertionSecrets map[string][]byte
	// LinkKey derives link verifiers. Nil makes a random key for this
	// process: links are then re-minted after a restart.
	LinkKey []byte
	// OldLinkKeys are the link keys of earlier session keys still
	// configured: a link made under one is still shown and kept, so a key
	// rotation does not replace the links customers hold. New links use
	// LinkKey.
	OldLinkKeys [][]byte
	// Mail sends the mail links and the one-time codes; nil means none can
	// be sent.
	Mail mail.Sender
	// PublicBase is the console's address for people ("https://…"), which
	// mail links start with.
	PublicBase string
	// Log reports mails the console could not send by itself (MailWaiting,
	// a re-quote); nil is slog.Default.
	Log *slog.Logger
	// CodeLimits bound code mails and wrong codes; a zero field takes
	// its value from DefaultCodeLimits (a bound is never "none").
	CodeLimits CodeLimits
	// Catalogue holds the texts of the customer's mails (nil:
	// locale.Installed(), with an installation's files); tests give one
	// with the pseudo-locale.
	Catalogue *locale.Catalogue
}

// Store is what confirmations read and write (*store.Store): links, the
// one-time codes sent for them, and used customer assertions.
type Store interface {
	ConfirmationLink(ctx context.Context, selector string) (store.ConfirmationLink, error)
	LiveConfirmationLink(ctx context.Context, invocationID string) (store.ConfirmationLink, error)
	InsertConfirmationLink(ctx context.Context, l store.ConfirmationLink) error
	ReplaceConfirmationLink(ctx context.Context, next store.ConfirmationLink) error
	DeleteDeadConfirmationLinks(ctx context.Context, before time.Time) (int64, error)
	LinksDue(ctx context.Context, now time.Time, limit int) ([]store.LinkDue, error)

	InsertConfirmationCode(ctx context.Context, c store.ConfirmationCode, invocationID string, caps store.MailCaps) (store.ConfirmationCode, error)
	DeleteConfirmationCode(ctx context.Context, id int64) error
	TryConfirmationCode(ctx context.Context, selector string, who store.CodeGuesser, at time.Time, caps store.CodeGuessCaps,
		match func(store.ConfirmationCode) bool) (store.CodeTry, error)
	UseCustomerAssertion(ctx context.Context, system, nonce, customerRef string, expiresAt, at time.Time) error

	InsertMailLink(ctx context.Context, l store.MailLink, caps store.MailCaps) (store.SentMail, error)
	MailLinkByHash(ctx context.Context, tokenHash []byte) (store.MailLink, error)
	SpendMailLink(ctx context.Context, tokenHash []byte, at time.Time) (store.MailLink, error)
	RetireMailLinks(ctx context.Context, invocationID string, at time.Time) error
	DeleteMailLink(ctx context.Context, tokenHash []byte) error

	MailsDue(ctx context.Context, now time.Time, sys store.MailSystems, limit int) ([]store.MailDue, error)
	ClaimCustomerMail(ctx context.Context, invocationID string, version int32, now, leaseUntil time.Time) (int, string, bool, error)
	FinishCustomerMail(ctx context.Context, invocationID string, version int32, outcome string, sentAt *time.Time, nextAt, now time.Time, locale string) error
	LastCustomerLocale(ctx context.Context, system, customerRef string) (string, error)
	MailOfVersion(ctx context.Context, invocationID string, version int32) (store.VersionMail, error)
}

// Service makes links and checks customers' proofs.
type Service struct {
	store    Store
	cp       *controlplane.Service
	registry *adapter.Registry
	cfg      Config
	now      func() time.Time
	// wake asks this instance's mail loop (RunMailWaiting) for a pass
	// now: a re-quote hands its mail to the outbox.
	wake chan struct{}
}

// New builds the service; now is the clock (time.Now when nil).
func New(st Store, cp *controlplane.Service, reg *adapter.Registry, cfg Config, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	if cfg.Proofs == nil {
		cfg.Proofs = map[string][]Proof{"*": DefaultProofs}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	cfg.CodeLimits = cfg.CodeLimits.orDefaults()
	if len(cfg.LinkKey) == 0 {
		cfg.LinkKey = make([]byte, 32)
		_, _ = rand.Read(cfg.LinkKey)
	}
	s := &Service{store: st, cp: cp, registry: reg, cfg: cfg, now: now, wake: make(chan struct{}, 1)}
	if cp != nil {
		// The link is made when the control plane routes a request to
		// its customer, in that transaction; reading one writes nothing.
		cp.MintLinksWith(s)
	}
	return s
}

// PathPrefix is where links live on the console: "/c/<token>".
const PathPrefix = "/c/"

const selectorBytes = 12

var (
	selectorLen = base64.RawURLEncoding.EncodedLen(selectorBytes)
	verifierLen = base64.RawURLEncoding.EncodedLen(sha256.Size)
)

// Accepts lists the proofs system accepts, in page order. An assertion
// counts only where the system has a secret; a passkey where the system's
// list names it or the account (a passkey is added only after a proof as
// strong as the account, and is bound to the device that holds it).
func (s *Service) Accepts(system string) []Proof {
	list, ok := s.cfg.Proofs[system]
	if !ok {
		list = s.cfg.Proofs["*"]
	}
	var out []Proof
	for _, p := range Proofs {
		for _, q := range list {
			if p == q && (p != ProofAssertion || len(s.cfg.AssertionSecrets[system]) > 0) {
				out = append(out, p)
			}
		}
	}
	if slices.Contains(out, ProofAccount) && !slices.Contains(out, ProofPasskey) {
		out = append(out, ProofPasskey)
	}
	return out
}

func (s *Service) accepts(system string, p Proof) bool {
	for _, q := range s.Accepts(system) {
		if q == p {
			return true
		}
	}
	return false
}

// Link returns the live link of inv for the customer to see it, as a path
// ("/c/<token>"), making one when there is none (a read of an invocation
// uses LiveLink, which writes nothing). Reading it again returns the same
// path until the link expires or is rotated. It fails with
// apperr.NotFound for another customer's invocation and
// apperr.IllegalTransition for one not awaiting confirmation.
func (s *Service) Link(ctx context.Context, inv controlplane.Invocation, customerRef string) (string, error) {
	if err := s.linkable(ctx, inv, customerRef); err != nil {
		return "", err
	}
	for attempt := 0; attempt < 3; attempt++ {
		live, err := s.store.LiveConfirmationLink(ctx, inv.ID)
		if err == nil {
			if v, ok := s.verifierOf(live.Selector, live.VerifierHash); ok && s.now().Before(live.ExpiresAt) {
				return PathPrefix + live.Selector + "." + v, nil
			}
			// Expired, or minted under a link key this console no longer
			// has: replace it.
			return s.mint(ctx, inv, customerRef, true)
		}
		if !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
		path, err := s.mint(ctx, inv, customerRef, false)
		if errors.Is(err, store.ErrConflict) {
			continue // a concurrent read made it first: read theirs
		}
		return path, err
	}
	return "", fmt.Errorf("confirmation: link for %s: %w", inv.ID, store.ErrConflict)
}

// LiveLink returns the live link of invocation id as a path, made when
// the invocation was routed to its customer (NewLink). It only reads:
// ErrNotFound when the invocation has no live link this console can show
// (none was made, it expired, or it was made under another link key).
func (s *Service) LiveLink(ctx context.Context, id string) (string, error) {
	live, err := s.store.LiveConfirmationLink(ctx, id)
	if err != nil {
		return "", err
	}
	v, ok := s.verifierOf(live.Selector, live.VerifierHash)
	if !s.now().Before(live.ExpiresAt) || !ok {
		return "", fmt.Errorf("confirmation: link for %s: %w", id, store.ErrNotFound)
	}
	return PathPrefix + live.Selector + "." + v, nil
}

// NewLink is the row of a new live link of invocation id for its customer,
// living until expiresAt (the request's deadline): the control plane
// stores it in the transaction that routes the invocation to the customer
// (controlplane.LinkMinter).
func (s *Service) NewLink(id, customerRef string, expiresAt, now time.Time) store.ConfirmationLink {
	selector := random(selectorBytes)
	sum := sha256.Sum256([]byte(s.verifier(selector)))
	return store.ConfirmationLink{Selector: selector, VerifierHash: sum[:], InvocationID: id,
		CustomerRef: adapter.NormaliseCustomerRef(customerRef), ExpiresAt: expiresAt, CreatedAt: now}
}

// Rotate replaces inv's live link with a new one (the old one then opens
// nothing) and returns the new path: for a link that reached the wrong
// person.
func (s *Service) Rotate(ctx context.Context, inv controlplane.Invocation, customerRef string) (string, error) {
	if err := s.linkable(ctx, inv, customerRef); err != nil {
		return "", err
	}
	return s.mint(ctx, inv, customerRef, true)
}

func (s *Service) linkable(ctx context.Context, inv controlplane.Invocation, customerRef string) error {
	task, err := s.cp.Task(ctx, inv.TaskID)
	if err != nil {
		return err
	}
	if !controlplane.SameCustomer(customerRef, task.CustomerRef) {
		return apperr.New(apperr.NotFound, "This request is not this customer's.")
	}
	if inv.State != controlplane.AwaitingConfirmation || inv.DeadlineAt == nil {
		return apperr.New(apperr.IllegalTransition, "Only a request awaiting the customer's confirmation gets a link (this one is %s).",
			inv.State.Label())
	}
	return nil
}

func (s *Service) mint(ctx context.Context, inv controlplane.Invocation, customerRef string, replace bool) (string, error) {
	row := s.NewLink(inv.ID, customerRef, *inv.DeadlineAt, s.now())
	var err error
	if replace {
		err = s.store.ReplaceConfirmationLink(ctx, row)
	} else {
		err = s.store.InsertConfirmationLink(ctx, row)
	}
	if err != nil {
		return "", fmt.Errorf("confirmation: link for %s: %w", inv.ID, err)
	}
	return PathPrefix + row.Selector + "." + s.verifier(row.Selector), nil
}

// verifier is the secret half of a new link: an HMAC of its selector
// under the link key.
func (s *Service) verifier(selector string) string { return verifierWith(s.cfg.LinkKey, selector) }

// verifierOf is the verifier of a stored link, under whichever of the link
// keys (the current one, then the old ones) reproduces its hash; false when
// none does.
func (s *Service) verifierOf(selector string, stored []byte) (string, bool) {
	for _, key := range append([][]byte{s.cfg.LinkKey}, s.cfg.OldLinkKeys...) {
		if v := verifierWith(key, selector); hashMatches(v, stored) {
			return v, true
		}
	}
	return "", false
}

func verifierWith(key []byte, selector string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("countersign confirmation link\x00" + selector))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func hashMatches(verifier string, stored []byte) bool {
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare(sum[:], stored) == 1
}

// Problem says why a link does not open.
type Problem string

// The problems a link can have, each with its own page.
const (
	// Unknown: well formed, but no such link was issued here (or it was
	// cleaned up long after it ended).
	Unknown Problem = "unknown"
	// Tampered: damaged or altered (cut short in a copy, a character changed).
	Tampered Problem = "tampered"
	// Expired: its invocation's deadline passed.
	Expired Problem = "expired"
	// Replaced: a newer link of the same request was issued on purpose.
	Replaced Problem = "replaced"
)

// LinkError is the refusal of a link.
type LinkError struct {
	Problem Problem
}

func (e *LinkError) Error() string { return "confirmation: link " + string(e.Problem) }

// AsLinkError finds a *LinkError in err's chain.
func AsLinkError(err error) (*LinkError, bool) {
	var le *LinkError
	ok := errors.As(err, &le)
	return le, ok
}

// Opened is what a valid link shows: which request, whose, and how its
// customer may prove who they are. Opening changes nothing.
type Opened struct {
	Selector     string
	InvocationID string
	// TaskID is the task of the link's request.
	TaskID      string
	CustomerRef string
	System      string
	Proofs      []Proof
	ExpiresAt   time.Time
	// Locale is the business's word for the customer's language, when an
	// assertion that gave one opened the link (CheckAssertion).
	Locale string
}

// Open checks token without using it. It fails with *LinkError saying
// which problem the link has; a database failure is returned as is.
func (s *Service) Open(ctx context.Context, token string) (Opened, error) {
	o, _, err := s.open(ctx, token)
	return o, err
}

// open is Open that also returns the link's invocation, as read once.
func (s *Service) open(ctx context.Context, token string) (Opened, controlplane.Invocation, error) {
	none := controlplane.Invocation{}
	selector, verifier, ok := strings.Cut(token, ".")
	if !ok || len(selector) != selectorLen || len(verifier) != verifierLen || !urlSafe(selector) || !urlSafe(verifier) {
		return Opened{}, none, &LinkError{Problem: Tampered}
	}
	row, err := s.store.ConfirmationLink(ctx, selector)
	if errors.Is(err, store.ErrNotFound) {
		return Opened{}, none, &LinkError{Problem: Unknown}
	}
	if err != nil {
		return Opened{}, none, err
	}
	if !hashMatches(verifier, row.VerifierHash) {
		return Opened{}, none, &LinkError{Problem: Tampered}
	}
	switch {
	case row.RevokedAt != nil:
		return Opened{}, none, &LinkError{Problem: Replaced}
	case !s.now().Before(row.ExpiresAt):
		return Opened{}, none, &LinkError{Problem: Expired}
	}
	inv, err := s.cp.Invocation(ctx, row.InvocationID)
	if err != nil {
		return Opened{}, none, err
	}
	return Opened{Selector: selector, InvocationID: row.InvocationID, TaskID: inv.TaskID, CustomerRef: row.CustomerRef, System: inv.System,
		Proofs: s.Accepts(inv.System), ExpiresAt: row.ExpiresAt}, inv, nil
}

// SweepLinks deletes links and codes that expired or were replaced more
// than a day ago, and spent assertion nonces past their expiry. Then it
// makes the link of each request awaiting its customer that has none this
// console can show: one routed before links were made at routing, or one
// made under a link key this console no longer has (the session keys
// rotated; the old link then says "replaced"). The console sweeps at
// start and every ten minutes, so reads never need to write one.
func (s *Service) SweepLinks(ctx context.Context) (int64, error) {
	n, err := s.store.DeleteDeadConfirmationLinks(ctx, s.now().Add(-24*time.Hour))
	if err != nil {
		return n, err
	}
	return n, s.remint(ctx)
}

// remintBatch bounds how many requests one sweep looks at.
const remintBatch = 5000

func (s *Service) remint(ctx context.Context) error {
	due, err := s.store.LinksDue(ctx, s.now(), remintBatch)
	if err != nil {
		return err
	}
	for _, d := range due {
		if _, ok := s.verifierOf(deref(d.Selector), d.VerifierHash); d.Selector != nil && ok {
			continue
		}
		row := s.NewLink(d.InvocationID, d.CustomerRef, d.DeadlineAt, s.now())
		if d.Selector != nil {
			err = s.store.ReplaceConfirmationLink(ctx, row)
		} else {
			err = s.store.InsertConfirmationLink(ctx, row)
		}
		if errors.Is(err, store.ErrConflict) {
			continue // made meanwhile
		}
		if err != nil {
			return fmt.Errorf("confirmation: link for %s: %w", d.InvocationID, err)
		}
	}
	return nil
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
