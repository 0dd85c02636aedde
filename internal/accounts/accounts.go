package accounts

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/store"
)

// User is a person who can sign in to the console.
type User struct {
	ID         int64
	Email      string
	Name       string
	Role       Role
	DisabledAt *time.Time
	CreatedAt  time.Time
}

// Disabled reports whether the user may no longer sign in.
func (u User) Disabled() bool { return u.DisabledAt != nil }

// Store is what the accounts domain reads and writes (*store.Store): users
// and the sign-in throttle's attempts.
type Store interface {
	UserByID(ctx context.Context, id int64) (store.User, error)
	UserByEmail(ctx context.Context, email string) (store.User, error)
	ListUsers(ctx context.Context) ([]store.User, error)
	CreateUser(ctx context.Context, u store.NewUser) (store.User, error)
	SetUserRole(ctx context.Context, id int64, role string, at time.Time) error
	SetUserDisabled(ctx context.Context, id int64, disabled bool, at time.Time) error
	SetUserPassword(ctx context.Context, id int64, hash string, keep []byte, at time.Time) error

	TakeSignInAttempt(ctx context.Context, account, source string, limits store.SignInLimits, at, windowStart time.Time) (store.SignInAttempt, error)
	ReturnSignInAttempt(ctx context.Context, account, source string) error
	SignInSucceeded(ctx context.Context, account, source string, at time.Time) error
	PruneSignInAttempts(ctx context.Context, windowStart, knownSince time.Time) error
}

// Service is the accounts domain: sign-in and user administration.
type Service struct {
	store    Store
	now      func() time.Time
	throttle Throttle
	hashers  hashers
	// check is CheckPassword; tests count or slow its calls.
	check func(hash, password string) (bool, error)
}

// NewService builds the service; now may be a fake clock in tests.
func NewService(st Store, now func() time.Time, throttle Throttle) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, now: now, throttle: throttle, hashers: newHashers(throttle.Hashers, throttle.HashWait),
		check: CheckPassword}
}

// ErrBadCredentials is the one answer for an unknown e-mail, a wrong
// password and a disabled account, so none can be told apart.
var ErrBadCredentials = apperr.New(apperr.Unauthenticated, "That e-mail and password do not match an account.")

// SignIn checks an e-mail and password from ip. It fails with
// ErrBadCredentials, or with apperr.LimitReached when this account from this
// address, this address, or this account from everywhere has had too many
// attempts recently (see Throttle), or when the server is too busy checking
// other passwords. The attempt is counted before the password is checked.
func (s *Service) SignIn(ctx context.Context, email, password, ip string) (User, error) {
	u, err := s.CheckSignInPassword(ctx, email, password, ip)
	if err != nil {
		return User{}, err
	}
	return u, s.CompleteSignIn(ctx, u, ip)
}

// CheckSignInPassword is SignIn's first half: the attempt is counted and
// the password checked, but the success is not recorded, so the attempt
// keeps counting in the throttle until CompleteSignIn. A sign-in that asks
// for a second factor next completes only after it: a right password
// alone neither clears the counters nor makes the address known, so
// wrong codes after it stay counted with the password guesses.
func (s *Service) CheckSignInPassword(ctx context.Context, email, password, ip string) (User, error) {
	account, source := normaliseEmail(email), SourceOf(ip)
	now := s.now()
	if err := s.takeAttempt(ctx, account, source, now); err != nil {
		return User{}, err
	}
	row, err := s.store.UserByEmail(ctx, account)
	hash := row.PasswordHash
	if errors.Is(err, store.ErrNotFound) {
		hash = dummyHash
	} else if err != nil {
		return User{}, err
	}
	ok, err := s.checkPassword(ctx, hash, password)
	if errors.Is(err, errBusy) {
		return User{}, errors.Join(err, s.store.ReturnSignInAttempt(context.WithoutCancel(ctx), account, source))
	}
	if err != nil {
		return User{}, fmt.Errorf("accounts: check password of user %d: %w", row.ID, err)
	}
	if !ok || row.ID == 0 || row.DisabledAt != nil {
		return User{}, ErrBadCredentials
	}
	return fromRow(row), nil
}

// CompleteSignIn records that u finished signing in from ip: the pair's
// failures are forgotten and the address becomes known to the account
// (see Throttle).
func (s *Service) CompleteSignIn(ctx context.Context, u User, ip string) error {
	return s.store.SignInSucceeded(ctx, normaliseEmail(u.Email), SourceOf(ip), s.now())
}

// TakeSignInAttempt counts one attempt at u's sign-in from ip other than a
// password (a second factor's code) in the password throttle, before the
// code is compared: it fails with apperr.LimitReached, counting nothing,
// when a counter is full, so codes and passwords share one budget.
func (s *Service) TakeSignInAttempt(ctx context.Context, u User, ip string) error {
	return s.takeAttempt(ctx, normaliseEmail(u.Email), SourceOf(ip), s.now())
}

// User returns the user with id, or apperr.NotFound.
func (s *Service) User(ctx context.Context, id int64) (User, error) {
	row, err := s.store.UserByID(ctx, id)
	if err != nil {
		return User{}, err
	}
	return fromRow(row), nil
}

// Users lists every user.
func (s *Service) Users(ctx context.Context) ([]User, error) {
	rows, err := s.store.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	users := make([]User, len(rows))
	for i, r := range rows {
		users[i] = fromRow(r)
	}
	return users, nil
}

// NewUser is an admin's request to create a user.
type NewUser struct {
	Email    string
	Name     string
	Role     Role
	Password string
}

// Create adds a user, or fails with apperr.Invalid naming each bad field
// (including an e-mail already in use).
func (s *Service) Create(ctx context.Context, in NewUser) (User, error) {
	fields := map[string]string{}
	email := normaliseEmail(in.Email)
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email {
		fields["email"] = "Enter an e-mail address like name@example.com."
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		fields["name"] = "Enter the person's name."
	} else if len(name) > 200 {
		fields["name"] = "Use at most 200 characters."
	}
	if !in.Role.Valid() {
		fields["role"] = "Choose one of: customer, agent, manager, admin."
	}
	if msg := passwordProblem(in.Password); msg != "" {
		fields["password"] = msg
	}
	if len(fields) > 0 {
		return User{}, apperr.InvalidFields(fields)
	}
	hash, err := s.hashPassword(ctx, in.Password)
	if err != nil {
		return User{}, err
	}
	row, err := s.store.CreateUser(ctx, store.NewUser{Email: email, Name: name, Role: string(in.Role), PasswordHash: hash, At: s.now()})
	if errors.Is(err, store.ErrConflict) {
		return User{}, apperr.InvalidFields(map[string]string{"email": "An account with this e-mail already exists."})
	}
	if err != nil {
		return User{}, err
	}
	return fromRow(row), nil
}

// SetRole changes a user's role. An admin cannot change their own role, so
// the last admin cannot lock everyone out by accident.
func (s *Service) SetRole(ctx context.Context, actor User, id int64, role Role) error {
	if !role.Valid() {
		return apperr.InvalidFields(map[string]string{"role": "Choose one of: customer, agent, manager, admin."})
	}
	if actor.ID == id {
		return apperr.New(apperr.Forbidden, "You cannot change your own role; ask another admin.")
	}
	return s.store.SetUserRole(ctx, id, string(role), s.now())
}

// SetDisabled disables a user, ending all their sessions at once, or
// enables them again. Admins cannot disable themselves.
func (s *Service) SetDisabled(ctx context.Context, actor User, id int64, disabled bool) error {
	if actor.ID == id && disabled {
		return apperr.New(apperr.Forbidden, "You cannot disable your own account; ask another admin.")
	}
	return s.store.SetUserDisabled(ctx, id, disabled, s.now())
}

// ChangePassword replaces a user's password after checking the current one,
// and ends their other sessions (keep is the hash of the session making the
// change). The current-password check is throttled like a sign-in from ip,
// so a borrowed session cannot guess the password faster than the sign-in
// form allows: too many attempts fail with apperr.LimitReached.
func (s *Service) ChangePassword(ctx context.Context, id int64, current, next string, keep []byte, ip string) error {
	row, err := s.store.UserByID(ctx, id)
	if err != nil {
		return err
	}
	ok, err := s.checkCurrent(ctx, row, current, ip)
	if err != nil {
		return err
	}
	fields := map[string]string{}
	if !ok {
		fields["current"] = "This is not your current password."
	}
	if msg := passwordProblem(next); msg != "" {
		fields["new"] = msg
	}
	if len(fields) > 0 {
		return apperr.InvalidFields(fields)
	}
	hash, err := s.hashPassword(ctx, next)
	if err != nil {
		return err
	}
	return s.store.SetUserPassword(ctx, id, hash, keep, s.now())
}

// ConfirmPassword checks user id's current password before a change to how
// they sign in (setting up a second factor), so a borrowed session cannot
// make one: throttled like a sign-in from ip (apperr.LimitReached), a
// wrong or empty password is apperr.Invalid on the field "password" (an
// empty one is not counted).
func (s *Service) ConfirmPassword(ctx context.Context, id int64, password, ip string) error {
	if password == "" { // no guess: nothing to count
		return apperr.InvalidFields(map[string]string{"password": "Enter your current password."})
	}
	row, err := s.store.UserByID(ctx, id)
	if err != nil {
		return err
	}
	ok, err := s.checkCurrent(ctx, row, password, ip)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.InvalidFields(map[string]string{"password": "This is not your current password."})
	}
	return nil
}

// checkCurrent checks a signed-in user's password in the sign-in throttle:
// the attempt is counted first, and a right password is recorded as a
// success.
func (s *Service) checkCurrent(ctx context.Context, row store.User, password, ip string) (bool, error) {
	account, source := row.Email, SourceOf(ip)
	now := s.now()
	if err := s.takeAttempt(ctx, account, source, now); err != nil {
		return false, err
	}
	ok, err := s.checkPassword(ctx, row.PasswordHash, password)
	if errors.Is(err, errBusy) {
		return false, errors.Join(err, s.store.ReturnSignInAttempt(context.WithoutCancel(ctx), account, source))
	}
	if err != nil || !ok {
		return false, err
	}
	return true, s.store.SignInSucceeded(ctx, account, source, now)
}

func passwordProblem(p string) string {
	switch {
	case len([]rune(p)) < MinPasswordLength:
		return fmt.Sprintf("Use at least %d characters.", MinPasswordLength)
	case len(p) > 512:
		return "Use at most 512 characters."
	}
	return ""
}

// normaliseEmail is the form accounts are kept and found by; a customer
// account's e-mail is the customer's reference, so it follows that rule.
func normaliseEmail(s string) string { return adapter.NormaliseCustomerRef(s) }

func fromRow(r store.User) User {
	return User{ID: r.ID, Email: r.Email, Name: r.Name, Role: Role(r.Role), DisabledAt: r.DisabledAt, CreatedAt: r.CreatedAt}
}

// ResetPassword sets a user's password without the current one and ends
// all their sessions. It is for operators (demo seeding, the command line),
// never for a web request.
func (s *Service) ResetPassword(ctx context.Context, email, password string) error {
	if msg := passwordProblem(password); msg != "" {
		return apperr.InvalidFields(map[string]string{"password": msg})
	}
	row, err := s.store.UserByEmail(ctx, normaliseEmail(email))
	if err != nil {
		return err
	}
	hash, err := HashPassword(password)
	if err != nil {
		return err
	}
	return s.store.SetUserPassword(ctx, row.ID, hash, nil, s.now())
}

// EnsurePassword makes password the user's password, like ResetPassword,
// but changes nothing when it already is: demo seeding calls it at every
// start, and a restart must not sign everyone out.
func (s *Service) EnsurePassword(ctx context.Context, email, password string) error {
	row, err := s.store.UserByEmail(ctx, normaliseEmail(email))
	if err != nil {
		return err
	}
	if ok, err := CheckPassword(row.PasswordHash, password); err == nil && ok {
		return nil
	}
	return s.ResetPassword(ctx, email, password)
}

// UserIDByEmail finds a user's id, or apperr.NotFound.
func (s *Service) UserIDByEmail(ctx context.Context, email string) (int64, error) {
	row, err := s.store.UserByEmail(ctx, normaliseEmail(email))
	if err != nil {
		return 0, err
	}
	return row.ID, nil
}
