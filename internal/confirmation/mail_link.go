package confirmation

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"html/template"
	"strings"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/consent"
	"countersign/internal/controlplane"
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
	return s.mailLink(ctx, o, inv, false)
}

// mailLink mails inv's quote with a new link, as SendLink says; an
// unprompted one is the console's own (MailWaiting). When the mail cannot
// be sent its link is deleted, whoever asked: nobody holds it, so it
// counts against no limit and stands for no mail of its version (the
// console's own mail of that version then still goes).
func (s *Service) mailLink(ctx context.Context, o Opened, inv controlplane.Invocation, unprompted bool) (SentLink, error) {
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
	msg := LinkMail(contact, s.cfg.PublicBase+MailLinkPrefix+token, inv, s.brand(o.System), expires, now)
	if err := s.send(ctx, msg); err != nil {
		if derr := s.store.DeleteMailLink(context.WithoutCancel(ctx), sum[:]); derr != nil {
			err = errors.Join(err, derr)
		}
		return SentLink{}, &apperr.Error{Kind: apperr.Upstream, Code: "mail_failed", Err: err,
			Message: "We could not send the mail just now, so no link is on its way.",
			Hint:    "Try again in a minute, or use another way of showing us it's you."}
	}
	return SentLink{To: maskEmail(contact.Email), ExpiresAt: expires}, nil
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

// LinkMail is the message that carries a mail link: the request's whole
// quote (every line its page shows, in the business's name and zone),
// one "Review and decide" link, how long it works and that it works once,
// and that nobody will ask for it. Its subject names the business, never
// the request's title.
func LinkMail(to adapter.Contact, link string, inv controlplane.Invocation, brand adapter.Brand, expires, now time.Time) mail.Message {
	q := quoteForMail(inv, brand, now)
	zone := brand.Zone
	if zone == nil {
		zone = time.UTC
	}
	until := expires.In(zone).Format("15:04 MST")
	changed := ""
	if inv.SupersedesID != "" {
		changed = "The details of this request changed since you saw it, so the earlier link no longer works. This is the request as it stands now."
	}
	intro := q.Shop + " asks you to review this request before anything changes:"
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", greeting(to))
	if changed != "" {
		fmt.Fprintf(&b, "%s\n\n", changed)
	}
	fmt.Fprintf(&b, "%s\n\n", intro)
	b.WriteString(q.plain())
	fmt.Fprintf(&b, "\nReview and decide:\n%s\n\n", link)
	fmt.Fprintf(&b, "%s It works until %s.\n\n", linkRule, until)
	b.WriteString(linkWarning + "\n\n")
	b.WriteString("If you did not expect this, ignore it: nothing changes unless you confirm.\n\n")
	fmt.Fprintf(&b, "%s uses Countersign to ask you before an assistant changes anything for you.\n", q.Shop)

	esc := template.HTMLEscapeString
	var h strings.Builder
	h.WriteString("<p>" + esc(greeting(to)) + "</p>\n")
	if changed != "" {
		h.WriteString("<p><b>" + esc(changed) + "</b></p>\n")
	}
	h.WriteString("<p>" + esc(intro) + "</p>\n" + q.html())
	h.WriteString(`<p style="margin:24px 0"><a href="` + esc(link) + `" style="background:#1f4e79;color:#fff;padding:12px 20px;` +
		`border-radius:6px;text-decoration:none;font-weight:bold">Review and decide</a></p>` + "\n")
	h.WriteString("<p>" + esc(linkRule) + " It works until " + esc(until) + ".</p>\n<p><b>" + esc(linkWarning) + "</b></p>\n")
	h.WriteString("<p>" + esc(q.Shop) + " uses Countersign to ask you before an assistant changes anything for you.</p>\n")

	m := mail.Message{To: to.Email, Subject: "Review and decide a request with " + q.Shop, Body: b.String(),
		HTML: htmlPage("Review and decide", h.String())}
	if q.Shop != "" {
		m.FromName = q.Shop + " via Countersign"
	}
	return m
}

// linkRule and linkWarning are what a link mail says of its link.
const (
	linkRule = "The link opens this request in your browser, where you confirm or decline it. " +
		"It works once, only for this request exactly as shown above."
	linkWarning = "Nobody — not our team and not the assistant you are chatting with — will ever ask you for this link " +
		"or to read anything out of this mail. Do not paste it into a chat."
)
