package confirmation

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"math/big"
	"strings"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/mail"
	"countersign/store"
)

// The shape of one-time codes.
const (
	// CodeDigits is how long a code is.
	CodeDigits = 6
	// CodeLifetime is how long a code works.
	CodeLifetime = 10 * time.Minute
)

// CodeLimits bound the mails people ask for (codes and links) per
// customer — across all their links, since links cost an assistant
// nothing — and per request, and wrong codes per customer, per assistant
// and across all customers together, against spraying many customers.
// They are counted in PostgreSQL, so every console instance shares them.
// The console's own mail of a request version (MailWaiting, a re-quote)
// counts against none: there is one per version, so the proposals bound
// it, and it must not use up what the customer may ask for.
type CodeLimits struct {
	// MailsPer15Min and MailsPerHour bound the mails (codes and links)
	// asked for one customer, so a model holding links cannot flood the
	// inbox.
	MailsPer15Min, MailsPerHour int
	// RequestMailsPer15Min and RequestMailsPerHour bound those asked for
	// one request. Below the customer's bounds, they keep one relayed link
	// from using up the mails the customer's other requests may ask for.
	RequestMailsPer15Min, RequestMailsPerHour int
	// MissesPerHour and MissesPerDay bound one customer's wrong codes;
	// past either, no code of theirs is compared until the window moves.
	MissesPerHour, MissesPerDay int
	// AssistantMissesPerHour bounds the wrong codes on the links of one
	// assistant's tasks, across its customers: an assistant holds those
	// links, so it is who could be guessing, and past this bound it has
	// used up its own customers' tries, not everyone's.
	AssistantMissesPerHour int
	// GlobalMissesPerHour bounds everyone's wrong codes together.
	GlobalMissesPerHour int
}

// DefaultCodeLimits are the limits a zero Config.CodeLimits means. A
// customer has at most 5 live codes (5 mails in 15 minutes, each living 10),
// so one wrong try hits with a chance of at most 5 in a million; 20 wrong
// tries a day make at most 1 in 10,000 per customer and day; one
// assistant's 100 an hour at most 1 in 2,000 an hour across all its
// customers; and the global 500 an hour at most 1 in 400 an hour in all.
var DefaultCodeLimits = CodeLimits{MailsPer15Min: 5, MailsPerHour: 10, RequestMailsPer15Min: 3, RequestMailsPerHour: 5,
	MissesPerHour: 10, MissesPerDay: 20, AssistantMissesPerHour: 100, GlobalMissesPerHour: 500}

// orDefaults fills each zero bound from DefaultCodeLimits.
func (l CodeLimits) orDefaults() CodeLimits {
	d := DefaultCodeLimits
	for _, f := range []struct {
		v *int
		d int
	}{
		{&l.MailsPer15Min, d.MailsPer15Min}, {&l.MailsPerHour, d.MailsPerHour},
		{&l.RequestMailsPer15Min, d.RequestMailsPer15Min}, {&l.RequestMailsPerHour, d.RequestMailsPerHour}, {&l.MissesPerHour, d.MissesPerHour},
		{&l.MissesPerDay, d.MissesPerDay}, {&l.AssistantMissesPerHour, d.AssistantMissesPerHour}, {&l.GlobalMissesPerHour, d.GlobalMissesPerHour},
	} {
		if *f.v <= 0 {
			*f.v = f.d
		}
	}
	return l
}

// SentCode says where a code went, masked for the page ("j•••@example.com").
type SentCode struct {
	To        string
	ExpiresAt time.Time
	// Opened is the link the code was asked on, as SendCode opened it;
	// set whenever the link opened, with or without an error after.
	Opened Opened
}

// SendCode sends a new one-time code for the link to the contact the
// business system has on file for its customer. Codes sent earlier stay
// valid until they expire: whoever holds the link (the assistant too) can
// ask for a code but cannot retire the one the customer holds. It fails
// with *LinkError for a bad link, apperr.IllegalTransition (code
// nothing_to_decide) when the request no longer awaits the customer,
// apperr.Forbidden where the system does not accept codes,
// apperr.LimitReached past the customer's mail limits, and apperr.Upstream
// when no contact or mail is to be had.
func (s *Service) SendCode(ctx context.Context, token string) (SentCode, error) {
	o, inv, err := s.open(ctx, token)
	if err != nil {
		return SentCode{}, err
	}
	sent, err := s.sendCode(ctx, o, inv)
	sent.Opened = o
	return sent, err
}

func (s *Service) sendCode(ctx context.Context, o Opened, inv controlplane.Invocation) (SentCode, error) {
	if !s.accepts(o.System, ProofCode) {
		return SentCode{}, apperr.New(apperr.Forbidden, "This request cannot be confirmed with a code sent by e-mail.")
	}
	if !s.awaits(inv) {
		return SentCode{}, NothingToDecide()
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
		SentTo: contact.Email, Salt: salt, CodeHash: codeHash(salt, code), CreatedAt: now, ExpiresAt: now.Add(CodeLifetime)}, inv.ID, s.mailCaps(now))
	if errors.Is(err, store.ErrLimit) {
		return SentCode{}, &apperr.Error{Kind: apperr.LimitReached, Code: "too_many_codes",
			Message: fmt.Sprintf("We sent you a code at %s to %s, and %s.", row.CreatedAt.In(s.brand(o.System).Zone).Format("15:04 MST"),
				maskEmail(row.SentTo), s.mailLimitWords(err)),
			Hint:    "Check your mail for the codes we sent: each works for 10 minutes. Or try again later.",
			Details: map[string]any{"sent_at": row.CreatedAt, "sent_to": maskEmail(row.SentTo)}}
	}
	if err != nil {
		return SentCode{}, err
	}
	msg := CodeMail(s.mailLocalizer(ctx, o, contact, ""), contact, code, inv, s.brand(o.System), now)
	if err := s.send(ctx, msg); err != nil {
		// Nobody holds the code: it counts against no limit.
		if derr := s.store.DeleteConfirmationCode(context.WithoutCancel(ctx), row.ID); derr != nil {
			err = errors.Join(err, derr)
		}
		return SentCode{}, &apperr.Error{Kind: apperr.Upstream, Code: "mail_failed", Err: err,
			Message: "We could not send the code just now, so no code is on its way.",
			Hint:    "Try again in a minute, or use another way of showing us it's you."}
	}
	return SentCode{To: maskEmail(contact.Email), ExpiresAt: row.ExpiresAt}, nil
}

// mailCaps are the bounds of the mails people ask for, at now.
func (s *Service) mailCaps(now time.Time) store.MailCaps {
	lim := s.cfg.CodeLimits
	return store.MailCaps{
		Customer: []store.CodeCap{{Since: now.Add(-15 * time.Minute), Max: lim.MailsPer15Min}, {Since: now.Add(-time.Hour), Max: lim.MailsPerHour}},
		Request: []store.CodeCap{{Since: now.Add(-15 * time.Minute), Max: lim.RequestMailsPer15Min},
			{Since: now.Add(-time.Hour), Max: lim.RequestMailsPerHour}},
	}
}

// mailLimitWords says which bound a mail asked for met (err is the
// store's ErrLimit or ErrRequestLimit).
func (s *Service) mailLimitWords(err error) string {
	lim := s.cfg.CodeLimits
	if errors.Is(err, store.ErrRequestLimit) {
		return fmt.Sprintf("we send at most %d mails about one request in 15 minutes and %d in an hour",
			lim.RequestMailsPer15Min, lim.RequestMailsPerHour)
	}
	return fmt.Sprintf("we send you at most %d mails you ask for in 15 minutes and %d in an hour", lim.MailsPer15Min, lim.MailsPerHour)
}

// CodeMail is the message that carries a code, in l's language: it names
// exactly the one request the code decides (its title in the customer's
// words, its short reference, the business), then the whole quote the
// page shows, above the code, and warns that nobody, the assistant
// included, will ever ask for it. It comes from "<business> via
// Countersign" and its subject names the business in words, with no id: a
// code from a sender the customer does not know looks like phishing. now
// dates the quote's times.
func CodeMail(l *locale.Localizer, to adapter.Contact, code string, inv controlplane.Invocation, brand adapter.Brand, now time.Time) mail.Message {
	q := quoteForMail(l, inv, brand, now)
	shop := locale.Params{"Shop": q.Shop}
	lifetime := int(CodeLifetime / time.Minute)
	hello, helloHTML := greeting(l, to)
	var b strings.Builder
	b.WriteString(hello + "\n\n" + l.Text("mail.code.only", nil) + "\n\n")
	q.plainHead(&b)
	b.WriteString("\n")
	q.plainBody(&b)
	b.WriteString("\n" + l.Text("mail.code.is", locale.Params{"Code": code}) + "\n\n")
	b.WriteString(l.Text("mail.code.enter", nil) + "\n\n")
	b.WriteString(l.Text("mail.code.warning", nil) + "\n\n")
	b.WriteString(l.Text("mail.code.lifetime", locale.Params{"Count": lifetime}) + "\n\n")
	b.WriteString(l.Text("mail.footer", shop) + "\n")
	esc := html.EscapeString
	h := "<p>" + helloHTML + "</p>\n<p>" + esc(l.T("mail.code.only", nil)) + "</p>\n" + q.html() +
		`<p style="font-size:24px;letter-spacing:4px">` +
		l.HTML("mail.code.is", locale.Params{"Code": code}, map[string]string{"Code": "<b>" + bdi(code) + "</b>"}) + "</p>\n" +
		"<p>" + esc(l.T("mail.code.enter", nil)) + "</p>\n<p><b>" + esc(l.T("mail.code.warning", nil)) + "</b></p>\n" +
		"<p>" + l.HTML("mail.code.lifetime", locale.Params{"Count": lifetime}, nil) + "</p>\n" +
		"<p>" + l.HTML("mail.footer", shop, nil) + "</p>\n"
	// The subject names the business, never the request's title: that is
	// the system's text with its ids, and a header is no place for it.
	return letter(l, to.Email, q.Shop, l.T("mail.code.subject", shop), b.String(), l.T("mail.code.title", nil), h)
}

// brand is how system is named to its customers.
func (s *Service) brand(system string) adapter.Brand {
	if s.registry != nil {
		if sys, err := s.registry.System(system); err == nil {
			return adapter.BrandOf(sys)
		}
	}
	return adapter.Brand{Name: system, Zone: time.UTC}
}

func (s *Service) contact(ctx context.Context, o Opened) (adapter.Contact, error) {
	unavailable := &apperr.Error{Kind: apperr.Upstream, Code: "no_contact_on_file",
		Message: "We could not find where to e-mail you about this request.", Hint: "Use another way of confirming, or contact support."}
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

// The codes of the code field's errors (apperr.Error.FieldCodes["code"]),
// which a page words in its reader's language; the API keeps the English
// message beside them.
const (
	// CodeFormat: the code is not CodeDigits digits (data: "digits").
	CodeFormat = "code_format"
	// CodeGone: the link's code expired or was replaced by a newer one.
	CodeGone = "code_gone"
	// CodeLocked: the code is wrong and no more codes are checked for now.
	CodeLocked = "code_locked"
	// CodeWrong: the code is wrong (data: "tries_left", an int).
	CodeWrong = "code_wrong"
)

// CheckCode tries code against the link's live codes. Before anything is
// compared the customer's, the link's assistant's and everyone's wrong
// codes are counted, and past
// CodeLimits nothing is compared at all (apperr.LimitReached, code
// too_many_tries) — not even the right code. A wrong code counts against
// the customer before the answer leaves; a code is spent by its first
// right try. It returns the opened link on success; a wrong, dead or
// missing code is apperr.Invalid naming the field "code".
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
		return Opened{}, apperr.InvalidField("code", CodeFormat, fmt.Sprintf("enter the %d digits from the e-mail", CodeDigits), map[string]any{"digits": CodeDigits})
	}
	now := s.now()
	lim := s.cfg.CodeLimits
	task, err := s.cp.Task(ctx, o.TaskID)
	if err != nil {
		return Opened{}, err
	}
	who := store.CodeGuesser{CustomerRef: o.CustomerRef, AssistantID: task.AssistantID}
	try, err := s.store.TryConfirmationCode(ctx, o.Selector, who, now, store.CodeGuessCaps{
		Customer:  []store.CodeCap{{Since: now.Add(-time.Hour), Max: lim.MissesPerHour}, {Since: now.Add(-24 * time.Hour), Max: lim.MissesPerDay}},
		Assistant: []store.CodeCap{{Since: now.Add(-time.Hour), Max: lim.AssistantMissesPerHour}},
		Global:    []store.CodeCap{{Since: now.Add(-time.Hour), Max: lim.GlobalMissesPerHour}},
	}, func(c store.ConfirmationCode) bool {
		return subtle.ConstantTimeCompare(codeHash(c.Salt, code), c.CodeHash) == 1
	})
	switch {
	case errors.Is(err, store.ErrLimit):
		return Opened{}, &apperr.Error{Kind: apperr.LimitReached, Code: "too_many_tries",
			Message: "Too many wrong codes were tried, so we are not checking codes for now.",
			Hint:    "Try again in an hour, or sign in to your account to decide."}
	case errors.Is(err, store.ErrNotFound):
		return Opened{}, apperr.InvalidField("code", CodeGone, "this code no longer works: send a new one", nil)
	case err != nil:
		return Opened{}, err
	case !try.Right && try.MissesLeft == 0:
		return Opened{}, apperr.InvalidField("code", CodeLocked, "that code is wrong, and no more codes will be checked for now: try again later", nil)
	case !try.Right:
		return Opened{}, apperr.InvalidField("code", CodeWrong, fmt.Sprintf("that code is wrong; %d tries left", try.MissesLeft),
			map[string]any{"tries_left": try.MissesLeft})
	}
	return o, nil
}

// awaits says whether inv still waits for its customer's decision.
func (s *Service) awaits(inv controlplane.Invocation) bool {
	return inv.State == controlplane.AwaitingConfirmation && (inv.DeadlineAt == nil || s.now().Before(*inv.DeadlineAt))
}

// NothingToDecide is the refusal for a request that no longer awaits its
// customer: a link of a decided, expired or replaced request sends no code.
func NothingToDecide() error {
	return &apperr.Error{Kind: apperr.IllegalTransition, Code: "nothing_to_decide",
		Message: "There is nothing left to decide on this request: it was decided, replaced or withdrawn, or its time to decide ran out.",
		Hint:    "No code or link is needed. Ask the assistant if you want something else done."}
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
