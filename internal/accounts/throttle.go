package accounts

import (
	"context"
	"fmt"
	"net/netip"
	"runtime"
	"time"

	"countersign/internal/apperr"
	"countersign/store"
)

// Throttle limits password guesses, counted per window and taken before
// the password is checked (a refused attempt costs no hashing and is not
// counted). A password change's "current password" counts the same way.
type Throttle struct {
	// PerAccountSource is the most attempts at one e-mail from one address
	// (an IPv6 /64 counts as one address): the limit a guesser meets.
	PerAccountSource int
	// PerSource is the most attempts from one address at any e-mails.
	PerSource int
	// PerAccount is the most attempts at one e-mail from all addresses
	// together, much higher than PerAccountSource: it slows guessing spread
	// over many addresses. Addresses the account signed in from within
	// KnownSourceFor are exempt, so such guessing cannot lock the real user
	// out from where they usually sign in.
	PerAccount     int
	KnownSourceFor time.Duration
	Window         time.Duration
	// Hashers is how many password checks (argon2id, 19 MiB each) may run
	// at once; zero means one per CPU. HashWait is the longest a request
	// queues for one before it is told to come back; zero means 5 seconds.
	Hashers  int
	HashWait time.Duration
}

// DefaultThrottle is strict enough to stop guessing and loose enough for a
// person who mistypes a few times.
var DefaultThrottle = Throttle{PerAccountSource: 5, PerSource: 30, PerAccount: 50, KnownSourceFor: 30 * 24 * time.Hour,
	Window: 15 * time.Minute}

// hashers bounds concurrent argon2 work so that a burst of sign-ins cannot
// take 19 MiB each without limit.
type hashers struct {
	slots chan struct{}
	wait  time.Duration
}

func newHashers(n int, wait time.Duration) hashers {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if wait <= 0 {
		wait = 5 * time.Second
	}
	return hashers{slots: make(chan struct{}, n), wait: wait}
}

// errBusy is the polite answer when every hasher stayed busy for HashWait.
var errBusy = &apperr.Error{Kind: apperr.LimitReached, Code: "busy", Retryable: true, RetryAfterSeconds: 5,
	Message: "The server is busy checking other sign-ins. Try again in a few seconds."}

// do runs fn in a free slot, waiting at most h.wait and never past ctx.
func (h hashers) do(ctx context.Context, fn func()) error {
	ctx, cancel := context.WithTimeout(ctx, h.wait)
	defer cancel()
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		return errBusy
	}
	defer func() { <-h.slots }()
	fn()
	return nil
}

// checkPassword checks password against hash in a hashing slot.
func (s *Service) checkPassword(ctx context.Context, hash, password string) (ok bool, err error) {
	if berr := s.hashers.do(ctx, func() { ok, err = s.check(hash, password) }); berr != nil {
		return false, berr
	}
	return ok, err
}

// hashPassword hashes password in a hashing slot.
func (s *Service) hashPassword(ctx context.Context, password string) (hash string, err error) {
	if berr := s.hashers.do(ctx, func() { hash, err = HashPassword(password) }); berr != nil {
		return "", berr
	}
	return hash, err
}

// takeAttempt counts one guess at account's password from source, or fails
// with apperr.LimitReached (counting nothing) when a counter is full.
func (s *Service) takeAttempt(ctx context.Context, account, source string, now time.Time) error {
	t := s.throttle
	limits := store.SignInLimits{AccountSource: t.PerAccountSource, Source: t.PerSource, Account: t.PerAccount,
		KnownSourceFor: t.KnownSourceFor}
	res, err := s.store.TakeSignInAttempt(ctx, account, source, limits, now, now.Add(-t.Window))
	if err != nil {
		return err
	}
	if res.Taken {
		return nil
	}
	var wait time.Duration
	for _, c := range res.Full {
		wait = max(wait, c.WindowStart.Add(t.Window).Sub(now))
	}
	return throttled(max(wait, time.Second))
}

func throttled(wait time.Duration) error {
	minutes := int(wait.Round(time.Minute) / time.Minute)
	msg := "Too many failed sign-ins. Try again in a minute."
	if minutes > 1 {
		msg = fmt.Sprintf("Too many failed sign-ins. Try again in %d minutes.", minutes)
	}
	return &apperr.Error{Kind: apperr.LimitReached, Code: "sign_in_throttled", Message: msg,
		RetryAfterSeconds: int(wait.Seconds())}
}

// SourceOf is the key a limit per client address counts under (the
// sign-in throttle's, the OAuth registration limit's): the address
// itself, or its /64 for IPv6, since one subscriber usually holds a whole
// /64.
func SourceOf(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	addr = addr.Unmap().WithZone("")
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return p.String()
	}
	return addr.String()
}

// PruneFailures forgets throttle counters that no longer change any
// decision.
func (s *Service) PruneFailures(ctx context.Context) error {
	now := s.now()
	return s.store.PruneSignInAttempts(ctx, now.Add(-s.throttle.Window), now.Add(-s.throttle.KnownSourceFor))
}
