package confirmation

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"html"
	"strings"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/consent"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/mail"
	"countersign/store"
)

// The mail link: the proof is made where the quote is seen. The mail to
// the contact the business system has on file carries the whole quote and
// one "Review and decide" link. Opening the link (GET) shows a page with
// one button; only that page's POST spends the link, once, so a mail
// scanner or a link preview that fetches it proves nothing and spends
// nothing. Spending proves the browser that spends it is the customer for
// the one request, at the version and with the quote (its digest) the
// mail showed: whoever clicks in the customer's mailbox is the customer,
// and the page they land on is the quote. A link is 256 random bits of
// which only the SHA-256 is stored, lives MailLinkLifetime (or less, when
// the request's time to decide ends sooner), and a re-quote retires it.

// MailLinkPrefix is where mail links live on the console: "/m/<token>".
const MailLinkPrefix = "/m/"

// MailLinkLifetime is how long a mail link works at most.
const MailLinkLifetime = 30 * time.Minute

const mailTokenBytes = 32

var mailTokenLen = len(random(mailTokenBytes))

// SentLink says where a link mail went, masked for the page.
type SentLink struct {
	To        string
	ExpiresAt time.Time
	// Opened is the confirmation link the mail was asked on, as SendLink
	// opened it; set whenever the link opened.
	Opened Opened
	// Locale is the language the mail was written in (a BCP 47 tag), set
	// once it was written, whether or not it could be sent.
	Locale string
}

// SendLink mails the whole quote of the confirmation link's request with
// a new single-use "Review and decide" link to the contact the business
// system has on file for its customer, never to an address anyone names.
// Earlier mail links stay valid until they expire: whoever holds the
// confirmation link (the assistant too) can have a mail sent but cannot
// retire the one the customer holds. It fails as SendCode does:
// *LinkError, nothing_to_decide, apperr.Forbidden where the system does
// not accept the mail link, apperr.LimitReached past the customer's mail
// limits (codes and links together), apperr.Upstream without contact or
// mail.
func (s *Service) SendLink(ctx context.Context, token string) (SentLink, error) {
	o, inv, err := s.open(ctx, token)
	if err != nil {
		return SentLink{}, err
	}
	sent, err := s.sendLink(ctx, o, inv)
	sent.Opened = o
	return sent, err
}

func (s *Service) sendLink(ctx context.Context, o Opened, inv controlplane.Invocation) (SentLink, error) {
	return s.mailLink(ctx, o, inv, false, "")
}

// mailLink mails inv's quote with a new link, as SendLink says, in the
// customer's language (MailLanguage) or in kept, the language the
// console's own mail of the version was written in before; an unprompted
// one is the console's own (MailWaiting). When the mail cannot
// be sent its link is deleted, whoever asked: nobody holds it, so it
// counts against no limit and stands for no mail of its version (the
// console's own mail of that version then still goes).
func (s *Service) mailLink(ctx context.Context, o Opened, inv controlplane.Invocation, unprompted bool, kept string) (SentLink, error) {
	if !s.accepts(o.System, ProofLink) {
		return SentLink{}, apperr.New(apperr.Forbidden, "This request cannot be decided from a link we e-mail.")
	}
	if !s.awaits(inv) {
		return SentLink{}, NothingToDecide()
	}
	if s.cfg.Mail == nil {
		return SentLink{}, &apperr.Error{Kind: apperr.Upstream, Code: "mail_not_configured",
			Message: "This console cannot send mail: no mail server is configured.", Hint: "Use another way of confirming below, or contact support."}
	}
	contact, err := s.contact(ctx, o)
	if err != nil {
		return SentLink{}, err
	}
	digest, err := consent.QuoteDigest(inv.QuoteJSON)
	if err != nil {
		return SentLink{}, fmt.Errorf("confirmation: quote of %s: %w", inv.ID, err)
	}
	token := random(mailTokenBytes)
	sum := sha256.Sum256([]byte(token))
	now := s.now()
	expires := now.Add(MailLinkLifetime)
	if inv.DeadlineAt != nil && inv.DeadlineAt.Before(expires) {
		expires = *inv.DeadlineAt
	}
	// The console's own mail of a version is bounded by the proposals
	// (one per version) and counts against no one's mails asked for.
	caps := s.mailCaps(now)
	if unprompted {
		caps = store.MailCaps{}
	}
	newest, err := s.store.InsertMailLink(ctx, store.MailLink{TokenHash: sum[:], LinkSelector: o.Selector, InvocationID: inv.ID,
		Version: inv.Version, QuoteDigest: digest, CustomerRef: o.CustomerRef, SentTo: contact.Email, CreatedAt: now, ExpiresAt: expires,
		Unprompted: unprompted}, caps)
	if errors.Is(err, store.ErrLimit) {
		return SentLink{}, &apperr.Error{Kind: apperr.LimitReached, Code: "too_many_mails",
			Message: fmt.Sprintf("We e-mailed you at %s to %s, and %s.", newest.At.In(s.brand(o.System).Zone).Format("15:04 MST"),
				maskEmail(newest.SentTo), s.mailLimitWords(err)),
			Hint:    "Open the newest mail we sent you. Or try again later.",
			Details: map[string]any{"sent_at": newest.At, "sent_to": maskEmail(newest.SentTo)}}
	}
	if err != nil {
		return SentLink{}, err
	}
	l := s.mailLocalizer(ctx, o, contact, kept)
	msg := LinkMail(l, contact, s.cfg.PublicBase+MailLinkPrefix+token, inv, s.brand(o.System), expires, now)
	if err := s.send(ctx, msg); err != nil {
		if derr := s.store.DeleteMailLink(context.WithoutCancel(ctx), sum[:]); derr != nil {
			err = errors.Join(err, derr)
		}
		return SentLink{Locale: l.Tag().String()}, &apperr.Error{Kind: apperr.Upstream, Code: "mail_failed", Err: err,
			Message: "We could not send the mail just now, so no link is on its way.",
			Hint:    "Try again in a minute, or use another way of showing us it's you."}
	}
	return SentLink{To: maskEmail(contact.Email), ExpiresAt: expires, Locale: l.Tag().String()}, nil
}

// MailSendTimeout bounds one mail's hand-over to the mail server: a
// server that stalls holds neither a page nor the console's mail loop
// longer.
const MailSendTimeout = 30 * time.Second

// send hands m to the configured sender within MailSendTimeout.
func (s *Service) send(ctx context.Context, m mail.Message) error {
	ctx, cancel := context.WithTimeout(ctx, MailSendTimeout)
	defer cancel()
	return s.cfg.Mail.Send(ctx, m)
}

// LinkMail is the message that carries a mail link, in l's language: the
// request's whole quote (every line its page shows, in the business's
// name and zone), one "Review and decide" link, how long it works and
// that it works once, and that nobody will ask for it. Its subject names
// the business, never the request's title.
func LinkMail(l *locale.Localizer, to adapter.Contact, link string, inv controlplane.Invocation, brand adapter.Brand, expires, now time.Time) mail.Message {
	q := quoteForMail(l, inv, brand, now)
	zone := brand.Zone
	if zone == nil {
		zone = time.UTC
	}
	shop := locale.Params{"Shop": q.Shop}
	until := locale.Params{"When": l.When(expires, zone, now)}
	hello, helloHTML := greeting(l, to)
	var b strings.Builder
	b.WriteString(hello + "\n\n")
	if inv.SupersedesID != "" {
		b.WriteString(l.Text("mail.link.changed", nil) + "\n\n")
	}
	b.WriteString(l.Text("mail.link.intro", shop) + "\n\n")
	b.WriteString(q.plain())
	b.WriteString("\n" + l.Text("mail.link.button", nil) + "\n" + link + "\n\n")
	b.WriteString(l.Text("mail.link.rule", nil) + " " + l.Text("mail.link.until", until) + "\n\n")
	b.WriteString(l.Text("mail.link.warning", nil) + "\n\n")
	b.WriteString(l.Text("mail.link.unexpected", nil) + "\n\n")
	b.WriteString(l.Text("mail.footer", shop) + "\n")

	esc := html.EscapeString
	var h strings.Builder
	h.WriteString("<p>" + helloHTML + "</p>\n")
	if inv.SupersedesID != "" {
		h.WriteString("<p><b>" + esc(l.T("mail.link.changed", nil)) + "</b></p>\n")
	}
	h.WriteString("<p>" + l.HTML("mail.link.intro", shop, nil) + "</p>\n" + q.html())
	h.WriteString(`<p style="margin:24px 0"><a href="` + esc(link) + `" style="background:#1f4e79;color:#fff;padding:12px 20px;` +
		`border-radius:6px;text-decoration:none;font-weight:bold">` + esc(l.T("mail.link.button", nil)) + "</a></p>\n")
	h.WriteString("<p>" + esc(l.T("mail.link.rule", nil)) + " " + l.HTML("mail.link.until", until, nil) + "</p>\n")
	h.WriteString("<p><b>" + esc(l.T("mail.link.warning", nil)) + "</b></p>\n")
	h.WriteString("<p>" + l.HTML("mail.footer", shop, nil) + "</p>\n")
	return letter(l, to.Email, q.Shop, l.T("mail.link.subject", shop), b.String(), l.T("mail.link.button", nil), h.String())
}
