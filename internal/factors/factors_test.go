package factors

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/clocktest"
	"countersign/internal/controlplane"
	"countersign/internal/racetest"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

var testKey = []byte("0123456789abcdef0123456789abcdef")

type bundle struct {
	st    *store.Store
	acc   *accounts.Service
	svc   *Service
	clock *clocktest.Clock
	agent accounts.User
	admin accounts.User
}

const password = "correct horse battery"

func setup(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{st: store.New(dbtest.New(t)), clock: clocktest.New(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC))}
	b.acc = accounts.NewService(b.st, b.clock.Now, accounts.Throttle{PerAccountSource: 5, PerSource: 30, PerAccount: 50,
		KnownSourceFor: 24 * time.Hour, Window: 15 * time.Minute})
	svc, err := New(b.st, b.acc, Config{Key: testKey, Now: b.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	b.svc = svc
	for _, r := range []accounts.Role{accounts.Agent, accounts.Admin} {
		u, err := b.acc.Create(t.Context(), accounts.NewUser{Email: string(r) + "@example.test", Name: "Test", Role: r, Password: password})
		if err != nil {
			t.Fatal(err)
		}
		if r == accounts.Agent {
			b.agent = u
		} else {
			b.admin = u
		}
	}
	return b
}

// enrol sets up and confirms an authenticator for u and returns its secret
// and the recovery codes.
func (b *bundle) enrol(t *testing.T, u accounts.User) (string, []string) {
	t.Helper()
	e, err := b.svc.StartTOTP(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	secret := strings.ReplaceAll(e.Secret, " ", "")
	codes, err := b.svc.ConfirmTOTP(t.Context(), u, pw, b.code(t, secret))
	if err != nil {
		t.Fatal(err)
	}
	return secret, codes
}

func (b *bundle) code(t *testing.T, secret string) string {
	t.Helper()
	c, err := totp.GenerateCode(secret, b.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTOTPEnrolConfirmAndVerify(t *testing.T) {
	b := setup(t)
	ctx := t.Context()
	e, err := b.svc.StartTOTP(ctx, b.agent)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.URI, "otpauth://totp/") || !strings.HasPrefix(e.QR, "data:image/png;base64,") || e.Secret == "" {
		t.Fatalf("enrolment %+v", e)
	}
	if st, _ := b.svc.StatusOf(ctx, b.agent.ID); st.TOTP {
		t.Fatal("an unconfirmed authenticator counts")
	}
	if _, err := b.svc.Verify(ctx, b.agent, b.code(t, strings.ReplaceAll(e.Secret, " ", "")), "192.0.2.1"); !errors.Is(err, ErrWrongCode) {
		t.Fatalf("a code of an unconfirmed authenticator signs in: %v", err)
	}
	secret := strings.ReplaceAll(e.Secret, " ", "")
	if _, err := b.svc.ConfirmTOTP(ctx, b.agent, pw, "000000"); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("a wrong confirmation code: %v, want Invalid", err)
	}
	b.clock.Advance(30 * time.Second) // the failed attempt above is not a used step; a new code anyway
	codes, err := b.svc.ConfirmTOTP(ctx, b.agent, pw, b.code(t, secret))
	if err != nil {
		t.Fatal(err)
	}
	if len(codes) != RecoveryCodes {
		t.Fatalf("%d recovery codes, want %d", len(codes), RecoveryCodes)
	}
	st, err := b.svc.StatusOf(ctx, b.agent.ID)
	if err != nil || !st.TOTP || st.RecoveryLeft != RecoveryCodes {
		t.Fatalf("status %+v, %v", st, err)
	}
	if _, err := b.svc.StartTOTP(ctx, b.agent); !apperr.Is(err, apperr.Conflict) {
		t.Fatalf("a second set-up over a confirmed one: %v, want Conflict", err)
	}
	b.clock.Advance(30 * time.Second)
	if kind, err := b.svc.Verify(ctx, b.agent, b.code(t, secret), "192.0.2.1"); err != nil || kind != "totp" {
		t.Fatalf("a valid code: %q, %v", kind, err)
	}
}

// TestTOTPCodeReusedWithinItsWindowRefused: a code accepted once is
// refused for the rest of its window, and so is the code of the step
// before it (still within the skew).
func TestTOTPCodeReusedWithinItsWindowRefused(t *testing.T) {
	b := setup(t)
	ctx := t.Context()
	secret, _ := b.enrol(t, b.agent)
	b.clock.Advance(60 * time.Second)
	earlier := b.code(t, secret)
	b.clock.Advance(30 * time.Second)
	code := b.code(t, secret)
	if _, err := b.svc.Verify(ctx, b.agent, code, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(10 * time.Second)
	if _, err := b.svc.Verify(ctx, b.agent, code, "192.0.2.1"); !errors.Is(err, ErrWrongCode) {
		t.Fatalf("the same code again: %v, want ErrWrongCode", err)
	}
	if _, err := b.svc.Verify(ctx, b.agent, earlier, "192.0.2.1"); !errors.Is(err, ErrWrongCode) {
		t.Fatalf("the previous step's code after a later one: %v, want ErrWrongCode", err)
	}
}

// TestTOTPOneCodeRacedTwiceOneWins holds two requests with one code after
// both matched it and before either spent its step, then lets them go:
// the UPDATE's compare-and-set lets exactly one through.
func TestTOTPOneCodeRacedTwiceOneWins(t *testing.T) {
	b := setup(t)
	secret, _ := b.enrol(t, b.agent)
	for round := range 5 {
		b.clock.Advance(30 * time.Second)
		code := b.code(t, secret)
		var arrived sync.WaitGroup
		arrived.Add(2)
		b.svc.beforeUse = func() { arrived.Done(); arrived.Wait() }
		errs := racetest.Run(2, func(int) error {
			_, err := b.svc.Verify(context.Background(), b.agent, code, "192.0.2.1")
			return err
		})
		ok, refused := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, ErrWrongCode):
				refused++
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if ok != 1 || refused != 1 {
			t.Fatalf("round %d: %d accepted and %d refused, want 1 and 1", round, ok, refused)
		}
	}
}

func TestRecoveryCodeWorksOnce(t *testing.T) {
	b := setup(t)
	ctx := t.Context()
	_, codes := b.enrol(t, b.agent)
	typed := strings.ToUpper(strings.ReplaceAll(codes[3], "-", " "))
	if kind, err := b.svc.Verify(ctx, b.agent, typed, "192.0.2.1"); err != nil || kind != "recovery" {
		t.Fatalf("a recovery code as typed %q: %q, %v", typed, kind, err)
	}
	if _, err := b.svc.Verify(ctx, b.agent, codes[3], "192.0.2.1"); !errors.Is(err, ErrWrongCode) {
		t.Fatalf("a spent recovery code: %v, want ErrWrongCode", err)
	}
	if st, _ := b.svc.StatusOf(ctx, b.agent.ID); st.RecoveryLeft != RecoveryCodes-1 {
		t.Fatalf("%d codes left, want %d", st.RecoveryLeft, RecoveryCodes-1)
	}
	// Another person's code is not this person's.
	_, others := b.enrol(t, b.admin)
	if _, err := b.svc.Verify(ctx, b.agent, others[0], "192.0.2.1"); !errors.Is(err, ErrWrongCode) {
		t.Fatalf("another person's recovery code: %v, want ErrWrongCode", err)
	}
}

// TestTOTPWrongCodesCountInThePasswordThrottle: a right password and four
// wrong codes fill the five attempts of the account and address; the next
// code and the next password are refused before any check.
func TestTOTPWrongCodesCountInThePasswordThrottle(t *testing.T) {
	b := setup(t)
	ctx := t.Context()
	secret, _ := b.enrol(t, b.agent)
	b.clock.Advance(30 * time.Second)
	if _, err := b.acc.CheckSignInPassword(ctx, b.agent.Email, password, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := b.svc.Verify(ctx, b.agent, "000000", "192.0.2.1"); !errors.Is(err, ErrWrongCode) {
			t.Fatalf("wrong code %d: %v", i+1, err)
		}
	}
	if _, err := b.svc.Verify(ctx, b.agent, b.code(t, secret), "192.0.2.1"); !apperr.Is(err, apperr.LimitReached) {
		t.Fatalf("the right code after 1 password and 4 wrong codes: %v, want LimitReached", err)
	}
	if _, err := b.acc.CheckSignInPassword(ctx, b.agent.Email, password, "192.0.2.1"); !apperr.Is(err, apperr.LimitReached) {
		t.Fatalf("the password after 4 wrong codes: %v, want LimitReached", err)
	}
}

// TestTOTPSecretSealedAtRest: the row holds no secret in the clear, and a
// sealed secret opens neither for another person nor with another key.
func TestTOTPSecretSealedAtRest(t *testing.T) {
	b := setup(t)
	ctx := t.Context()
	secret, _ := b.enrol(t, b.agent)
	f, err := b.st.TOTPFactorOf(ctx, b.agent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(f.SecretSealed), secret) {
		t.Fatal("the secret is stored in the clear")
	}
	if _, err := b.svc.seal.open(b.admin.ID, f.SecretSealed); err == nil {
		t.Fatal("a secret opens for another person")
	}
	other, err := New(b.st, b.acc, Config{Key: []byte("fedcba9876543210fedcba9876543210"), Now: b.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.seal.open(b.agent.ID, f.SecretSealed); err == nil {
		t.Fatal("a secret opens with another key")
	}
	if _, err := New(b.st, b.acc, Config{Key: []byte("short")}); err == nil {
		t.Fatal("a short factor key is accepted")
	}
}

func TestFactorRequirementAuditedAndAdminOnly(t *testing.T) {
	b := setup(t)
	ctx := t.Context()
	if err := b.svc.SetRequired(ctx, b.agent, controlplane.Identification{Method: controlplane.IdentifiedPassword}, accounts.Agent, true, nil); !apperr.Is(err, apperr.Forbidden) {
		t.Fatalf("an agent requiring a factor: %v, want Forbidden", err)
	}
	if err := b.svc.SetRequired(ctx, b.admin, controlplane.Identification{Method: controlplane.IdentifiedPassword}, accounts.Customer, true, nil); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("customers: %v, want Invalid", err)
	}
	if err := b.svc.SetRequired(ctx, b.admin, controlplane.Identification{Method: controlplane.IdentifiedPassword}, accounts.Agent, true, nil); err != nil {
		t.Fatal(err)
	}
	if step, err := b.svc.StepAfterPassword(ctx, b.agent); err != nil || step != EnrolStep {
		t.Fatalf("an agent without a factor: step %d, %v; want EnrolStep", step, err)
	}
	var n int
	if err := b.st.Pool().QueryRow(ctx, `SELECT count(*) FROM events WHERE action = 'factor.requirement_changed'
		AND actor_id = $1::bigint::text AND data @> '{"role": "agent", "required": true, "identified_by": {"method": "password"}}'`, b.admin.ID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d audit events, %v; want 1", n, err)
	}
}
