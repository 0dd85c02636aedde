package accounts

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/clocktest"
	"countersign/internal/racetest"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

type testBundle struct {
	svc   *Service
	clock *clocktest.Clock
	user  User
	// checks counts password checks; inCheck is how many run right now and
	// maxInCheck the most that ever ran at once.
	checks, inCheck, maxInCheck atomic.Int64
}

const testPassword = "correct horse battery"

// setup builds the service over a fresh database with one agent. Each
// password check takes at least hold, so parallel attempts overlap.
func setup(t *testing.T, th Throttle, hold time.Duration) *testBundle {
	t.Helper()
	clk := clocktest.New(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC))
	b := &testBundle{svc: NewService(store.New(dbtest.New(t)), clk.Now, th), clock: clk}
	u, err := b.svc.Create(t.Context(), NewUser{Email: "agent@example.test", Name: "Agent", Role: Agent, Password: testPassword})
	if err != nil {
		t.Fatal(err)
	}
	b.user = u
	b.svc.check = func(hash, password string) (bool, error) {
		b.checks.Add(1)
		n := b.inCheck.Add(1)
		defer b.inCheck.Add(-1)
		for m := b.maxInCheck.Load(); n > m && !b.maxInCheck.CompareAndSwap(m, n); m = b.maxInCheck.Load() {
		}
		time.Sleep(hold)
		return CheckPassword(hash, password)
	}
	return b
}

func count(errs []error, code string) int {
	n := 0
	for _, err := range errs {
		if e, ok := apperr.As(err); ok && e.CodeOrKind() == code {
			n++
		}
	}
	return n
}

// TestParallelGuessesCheckedAtMostTheLimit races 16 wrong passwords for one
// account from one address against a limit of 5: the attempt is taken under
// the counter's row lock before hashing, so only 5 passwords are checked.
func TestParallelGuessesCheckedAtMostTheLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, Throttle{PerAccountSource: 5, PerSource: 100, PerAccount: 100, Window: 15 * time.Minute,
		Hashers: 16, HashWait: time.Minute}, 50*time.Millisecond)
	errs := racetest.Run(16, func(int) error {
		_, err := b.svc.SignIn(context.Background(), b.user.Email, "a guess", "203.0.113.9")
		return err
	})
	if got := b.checks.Load(); got > 5 {
		t.Errorf("%d passwords checked, want at most the limit of 5", got)
	}
	if bad, limited := count(errs, string(apperr.Unauthenticated)), count(errs, "sign_in_throttled"); bad != 5 || limited != 11 {
		t.Errorf("%d wrong-password answers and %d throttled, want 5 and 11: %v", bad, limited, errs)
	}
}

// TestHashingIsBounded: with 2 hashers, 8 parallel sign-ins never check more
// than 2 passwords at once; with every hasher busy past HashWait, the
// attempt is refused politely and given back, so it does not count.
func TestHashingIsBounded(t *testing.T) {
	t.Parallel()
	b := setup(t, Throttle{PerAccountSource: 100, PerSource: 100, PerAccount: 100, Window: 15 * time.Minute,
		Hashers: 2, HashWait: time.Minute}, 30*time.Millisecond)
	errs := racetest.Run(8, func(i int) error {
		_, err := b.svc.SignIn(context.Background(), b.user.Email, testPassword, fmt.Sprintf("198.51.100.%d", i))
		return err
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("sign-ins failed: %v", err)
	}
	if got := b.maxInCheck.Load(); got > 2 || got < 1 {
		t.Errorf("%d password checks ran at once, want at most 2", got)
	}
}

func TestBusyHashersAnswerPolitelyAndReturnTheAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t, Throttle{PerAccountSource: 1, PerSource: 100, PerAccount: 100, Window: 15 * time.Minute,
		Hashers: 1, HashWait: time.Second}, 0)
	// Hold the only hasher.
	held, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = b.svc.hashers.do(context.Background(), func() { close(held); <-release })
	}()
	<-held
	_, err := b.svc.SignIn(context.Background(), b.user.Email, testPassword, "192.0.2.1")
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.LimitReached || e.Code != "busy" || e.RetryAfterSeconds == 0 {
		t.Fatalf("sign-in while every hasher is busy: %v, want LimitReached busy with a retry time", err)
	}
	// The request's own deadline bounds the wait too (ignoring it would
	// hang this test for an hour).
	b.svc.hashers.wait = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := b.svc.SignIn(ctx, b.user.Email, testPassword, "192.0.2.2"); !errors.Is(err, errBusy) {
		t.Errorf("request with a deadline: %v, want busy", err)
	}
	close(release)
	// The limit is 1 attempt per address: the busy one was given back.
	if _, err := b.svc.SignIn(context.Background(), b.user.Email, testPassword, "192.0.2.1"); err != nil {
		t.Errorf("sign-in after the busy answer: %v, want success (the refused attempt must not count)", err)
	}
}

// TestGuessersCannotLockOutTheUser: one address guessing is stopped at 5
// without touching the user elsewhere; guessing spread over many addresses
// is stopped by the per-account limit, except from an address the user
// signed in from before.
func TestGuessersCannotLockOutTheUser(t *testing.T) {
	t.Parallel()
	b := setup(t, Throttle{PerAccountSource: 5, PerSource: 30, PerAccount: 12, KnownSourceFor: 24 * time.Hour,
		Window: 15 * time.Minute}, 0)
	ctx := context.Background()
	home := "192.0.2.10"
	if _, err := b.svc.SignIn(ctx, b.user.Email, testPassword, home); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		_, err := b.svc.SignIn(ctx, b.user.Email, "guess", "203.0.113.1")
		if want := map[bool]apperr.Kind{true: apperr.Unauthenticated, false: apperr.LimitReached}[i < 5]; apperr.KindOf(err) != want {
			t.Fatalf("guess %d from one address: %v, want %s", i+1, err, want)
		}
	}
	if _, err := b.svc.SignIn(ctx, b.user.Email, testPassword, "198.51.100.20"); err != nil {
		t.Errorf("the user from another address after one address guessed: %v, want success", err)
	}
	// Spread the guessing: 4 from each of 2 more addresses (and 5 earlier)
	// fill the account's limit of 12 attempts.
	for i := range 8 {
		if _, err := b.svc.SignIn(ctx, b.user.Email, "guess", fmt.Sprintf("203.0.113.%d", 2+i/4)); err == nil {
			t.Fatal("a wrong password signed in")
		}
	}
	if _, err := b.svc.SignIn(ctx, b.user.Email, "guess", "203.0.113.99"); !apperr.Is(err, apperr.LimitReached) {
		t.Errorf("a new address after the account's limit: %v, want LimitReached", err)
	}
	if _, err := b.svc.SignIn(ctx, b.user.Email, testPassword, home); err != nil {
		t.Errorf("the user from a known address during distributed guessing: %v, want success", err)
	}
	b.clock.Advance(15*time.Minute + time.Second)
	if _, err := b.svc.SignIn(ctx, b.user.Email, testPassword, "203.0.113.99"); err != nil {
		t.Errorf("after the window: %v, want success", err)
	}
}

func TestIPv6SourcesCountPer64(t *testing.T) {
	for in, want := range map[string]string{
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1": "2001:db8:1:2::/64",
		"::ffff:203.0.113.7":   "203.0.113.7",
		"203.0.113.7":          "203.0.113.7",
		"fe80::1%eth0":         "fe80::/64",
		"not an address":       "not an address",
	} {
		if got := SourceOf(in); got != want {
			t.Errorf("SourceOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestChangePasswordThrottled: a wrong current password counts like a
// failed sign-in from that address.
func TestChangePasswordThrottled(t *testing.T) {
	t.Parallel()
	b := setup(t, Throttle{PerAccountSource: 3, PerSource: 30, PerAccount: 30, Window: 15 * time.Minute}, 0)
	ctx := context.Background()
	for i := range 3 {
		err := b.svc.ChangePassword(ctx, b.user.ID, "guess", "a new long passphrase", nil, "203.0.113.1")
		if apperr.KindOf(err) != apperr.Invalid {
			t.Fatalf("guess %d: %v, want Invalid", i+1, err)
		}
	}
	err := b.svc.ChangePassword(ctx, b.user.ID, testPassword, "a new long passphrase", nil, "203.0.113.1")
	if !apperr.Is(err, apperr.LimitReached) {
		t.Fatalf("4th attempt: %v, want LimitReached", err)
	}
	if got := b.checks.Load(); got != 3 {
		t.Errorf("%d passwords checked, want 3", got)
	}
}
