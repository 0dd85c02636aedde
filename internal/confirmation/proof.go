package confirmation

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/mail"
	"countersign/store"
)

// The limits on one-time codes. A code has six digits; with at most
// CodeAttempts tries of each of CodesPerHour codes, a guesser's chance per
// link and hour is 25 in a million.
const (
	// CodeDigits is how long a code is.
	CodeDigits = 6
	// CodeLifetime is how long a code works.
	CodeLifetime = 10 * time.Minute
	// CodeAttempts is how many wrong tries kill a code.
	CodeAttempts = 5
	// CodesPerHour is how many codes one link may send in an hour, so a
	// model that holds the link cannot flood the customer's inbox.
	CodesPerHour = 5
)

// SentCode says where a code went, masked for the page ("j•••@example.com").
type SentCode struct {
	To        string
	ExpiresAt time.Time
}

// SendCode sends a new one-time code for the link to the contact the
// business system has on file for its customer; it replaces the link's
// earlier codes. It fails with *LinkError for a bad link, apperr.Forbidden
// where the system does not accept codes, apperr.LimitReached after
// CodesPerHour codes, and apperr.Upstream when no contact or mail is to
// be had.
func (s *Service) SendCode(ctx context.Context, token string) (SentCode, error) {
	o, err := s.Open(ctx, token)
	if err != nil {
		return SentCode{}, err
	}
	if !s.accepts(o.System, ProofCode) {
		return SentCode{}, apperr.New(apperr.Forbidden, "This request cannot be confirmed with a code sent by e-mail.")
	}
	if s.cfg.Mail == nil {
		return SentCode{}, &apperr.Error{Kind: apperr.Upstream, Code: "mail_not_configured",
			Message: "This console cannot send codes: no mail server is configured.", Hint: "Use another way of confirming below, or contact support."}
	}
	contact, err := s.contact(ctx, o)
	if err != nil {
		return SentCode{}, err
	}
	code, err := newCode()
	if err != nil {
		return SentCode{}, err
	}
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	now := s.now()
	row, err := s.store.InsertConfirmationCode(ctx, store.ConfirmationCode{LinkSelector: o.Selector, CustomerRef: o.CustomerRef,
		SentTo: contact.Email, Salt: salt, CodeHash: codeHash(salt, code), CreatedAt: now, ExpiresAt: now.Add(CodeLifetime)},
		now.Add(-time.Hour), CodesPerHour)
	if errors.Is(err, store.ErrLimit) {
		return SentCode{}, &apperr.Error{Kind: apperr.LimitReached, Code: "too_many_codes",
			Message: fmt.Sprintf("We have already sent %d codes for this request in the last hour.", CodesPerHour),
			Hint:    "Use the latest code we sent, or try again in an hour."}
	}
	if err != nil {
		return SentCode{}, err
	}
	inv, err := s.cp.Invocation(ctx, o.InvocationID)
	if err != nil {
		return SentCode{}, err
	}
	greeting := "Hello,"
	if contact.Name != "" {
		greeting = "Hello " + contact.Name + ","
	}
	body := fmt.Sprintf("%s\n\nYour code is %s\n\nEnter it on the confirmation page to decide on this request:\n%s\n\n"+
		"The code works for %d minutes. If you did not ask for it, ignore this message: nothing changes without the code.\n",
		greeting, code, inv.Quote.Title, int(CodeLifetime/time.Minute))
	if err := s.cfg.Mail.Send(ctx, mail.Message{To: contact.Email, Subject: "Your confirmation code", Body: body}); err != nil {
		return SentCode{}, &apperr.Error{Kind: apperr.Upstream, Code: "mail_failed", Err: err,
			Message: "We could not send the code just now.", Hint: "Try again in a minute, or use another way of confirming."}
	}
	return SentCode{To: maskEmail(contact.Email), ExpiresAt: row.ExpiresAt}, nil
}

func (s *Service) contact(ctx context.Context, o Opened) (adapter.Contact, error) {
	unavailable := &apperr.Error{Kind: apperr.Upstream, Code: "no_contact_on_file",
		Message: "We could not find where to send a code for this request.", Hint: "Use another way of confirming, or contact support."}
	sys, err := s.registry.System(o.System)
	if err != nil {
		return adapter.Contact{}, unavailable
	}
	dir, ok := sys.(adapter.ContactDirectory)
	if !ok {
		return adapter.Contact{}, unavailable
	}
	c, err := dir.Contact(ctx, adapter.Principal{CustomerRef: o.CustomerRef})
	if err != nil || strings.TrimSpace(c.Email) == "" {
		unavailable.Err = err
		return adapter.Contact{}, unavailable
	}
	return c, nil
}

// CheckCode tries code against the link's latest code. Each try counts,
// right or wrong; a code is spent by its first right try. It returns the
// opened link on success; a wrong, dead or missing code is apperr.Invalid
// naming the field "code".
func (s *Service) CheckCode(ctx context.Context, token, code string) (Opened, error) {
	o, err := s.Open(ctx, token)
	if err != nil {
		return Opened{}, err
	}
	if !s.accepts(o.System, ProofCode) {
		return Opened{}, apperr.New(apperr.Forbidden, "This request cannot be confirmed with a code sent by e-mail.")
	}
	code = strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, code)
	if len(code) != CodeDigits || strings.Trim(code, "0123456789") != "" {
		return Opened{}, apperr.InvalidFields(map[string]string{"code": fmt.Sprintf("enter the %d digits from the e-mail", CodeDigits)})
	}
	now := s.now()
	row, err := s.store.TryConfirmationCode(ctx, o.Selector, now, CodeAttempts)
	if errors.Is(err, store.ErrNotFound) {
		return Opened{}, apperr.InvalidFields(map[string]string{"code": "this code no longer works: send a new one"})
	}
	if err != nil {
		return Opened{}, err
	}
	if subtle.ConstantTimeCompare(codeHash(row.Salt, code), row.CodeHash) != 1 {
		left := CodeAttempts - int(row.Attempts)
		if left <= 0 {
			return Opened{}, apperr.InvalidFields(map[string]string{"code": "that code is wrong, and it no longer works: send a new one"})
		}
		return Opened{}, apperr.InvalidFields(map[string]string{"code": fmt.Sprintf("that code is wrong; %d tries left", left)})
	}
	if err := s.store.UseConfirmationCode(ctx, row.ID, now); errors.Is(err, store.ErrConflict) {
		return Opened{}, apperr.InvalidFields(map[string]string{"code": "this code was used already: send a new one"})
	} else if err != nil {
		return Opened{}, err
	}
	return o, nil
}

func newCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", fmt.Errorf("confirmation: code: %w", err)
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

func codeHash(salt []byte, code string) []byte {
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte(code))
	return h.Sum(nil)
}

// maskEmail shows enough of an address for its owner to recognise it.
func maskEmail(email string) string {
	local, domain, ok := strings.Cut(email, "@")
	if !ok || local == "" {
		return "your e-mail address on file"
	}
	return local[:1] + "•••@" + domain
}
