// Package notify tells people about work waiting for them: a card that
// arrived in the approval queue or is close to its deadline, and an
// invocation whose result is unknown. It posts to a Slack-compatible
// incoming webhook and sends e-mail over SMTP, each with a deep link into
// the console. A notice is claimed in PostgreSQL before it is sent, so
// several console instances send it once (at most once: a crash between
// the claim and the send loses that notice, never duplicates it).
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/smtp"
	"net/url"
	"strings"
	"time"

	"countersign/store"
)

// Config says where notices go. An empty WebhookURL or SMTPAddr turns that
// channel off.
type Config struct {
	// BaseURL is the console's public address, for deep links
	// ("https://console.example.com").
	BaseURL string
	// WebhookURL is a Slack-compatible incoming webhook.
	WebhookURL string
	// SMTPAddr is host:port of a mail server; From and To address the mail.
	SMTPAddr string
	SMTPUser string
	SMTPPass string
	From     string
	To       []string
	// DeadlineWarning is how long before a card's deadline to warn.
	DeadlineWarning time.Duration
	// Lookback bounds which arrivals and unverified results are announced:
	// older ones (e.g. at a first start) are not.
	Lookback time.Duration
	// HTTP is the webhook client; nil means one with a 10 second timeout.
	HTTP *http.Client
}

// Notice is one message.
type Notice struct {
	Kind string // "arrived", "deadline" or "unverified"
	// Text is the message in one sentence.
	Text string
	// Link is the deep link into the console.
	Link string
}

// Store is what the notifier reads and writes (*store.Store): the notices
// due and a claim on each, so that one console instance sends it.
type Store interface {
	DueNotices(ctx context.Context, arrivedSince, deadlineBefore, unverifiedSince time.Time, limit int) ([]store.DueNotice, error)
	ClaimNotice(ctx context.Context, invocationID, kind string, at time.Time) (bool, error)
}

// Notifier finds due notices and sends them.
type Notifier struct {
	cfg   Config
	store Store
	now   func() time.Time
	log   *slog.Logger
}

// New builds a notifier; now and log may be nil.
func New(cfg Config, st Store, now func() time.Time, log *slog.Logger) *Notifier {
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.DeadlineWarning <= 0 {
		cfg.DeadlineWarning = 15 * time.Minute
	}
	if cfg.Lookback <= 0 {
		cfg.Lookback = time.Hour
	}
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Notifier{cfg: cfg, store: st, now: now, log: log}
}

// Enabled reports whether any channel is configured.
func (n *Notifier) Enabled() bool { return n.cfg.WebhookURL != "" || n.cfg.SMTPAddr != "" }

// Run sends due notices every interval until ctx ends.
func (n *Notifier) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := n.SendDue(ctx); err != nil && ctx.Err() == nil {
			n.log.Warn("notifications", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SendDue claims and sends every due notice and returns how many it sent.
// A channel that fails is logged and does not stop the others.
func (n *Notifier) SendDue(ctx context.Context) (int, error) {
	if !n.Enabled() {
		return 0, nil
	}
	now := n.now()
	due, err := n.store.DueNotices(ctx, now.Add(-n.cfg.Lookback), now.Add(n.cfg.DeadlineWarning), now.Add(-n.cfg.Lookback), 100)
	if err != nil {
		return 0, err
	}
	sent := 0
	for _, d := range due {
		ok, err := n.store.ClaimNotice(ctx, d.InvocationID, d.Kind, now)
		if err != nil {
			return sent, err
		}
		if !ok {
			continue
		}
		msg := n.notice(d)
		if err := n.Send(ctx, msg); err != nil {
			n.log.Warn("notification not delivered", "invocation", d.InvocationID, "kind", d.Kind, "error", err)
			continue
		}
		sent++
	}
	return sent, nil
}

func (n *Notifier) notice(d store.DueNotice) Notice {
	title := d.Title
	if title == "" {
		title = d.Action + " on " + d.TargetDisplay
	}
	switch d.Kind {
	case "deadline":
		left := "soon"
		if d.DeadlineAt != nil {
			left = "in " + d.DeadlineAt.Sub(n.now()).Round(time.Minute).String()
		}
		return Notice{Kind: d.Kind, Text: fmt.Sprintf("Deadline %s: %s is still waiting for approval.", left, title),
			Link: n.cfg.BaseURL + "/queue/" + url.PathEscape(d.InvocationID)}
	case "unverified":
		return Notice{Kind: d.Kind, Text: fmt.Sprintf("Result needs checking: %s may or may not have happened.", title),
			Link: n.cfg.BaseURL + "/tasks/" + url.PathEscape(d.TaskID) + "?inspect=" + url.QueryEscape(d.InvocationID) + "#inspect"}
	}
	return Notice{Kind: d.Kind, Text: fmt.Sprintf("Waiting for approval: %s.", title),
		Link: n.cfg.BaseURL + "/queue/" + url.PathEscape(d.InvocationID)}
}

// Send delivers one notice on every configured channel.
func (n *Notifier) Send(ctx context.Context, msg Notice) error {
	var errs []error
	if n.cfg.WebhookURL != "" {
		errs = append(errs, n.postWebhook(ctx, msg))
	}
	if n.cfg.SMTPAddr != "" {
		errs = append(errs, n.sendMail(msg))
	}
	return errors.Join(errs...)
}

// postWebhook posts Slack's incoming-webhook shape: text with a
// <link|label> deep link.
func (n *Notifier) postWebhook(ctx context.Context, msg Notice) error {
	body, _ := json.Marshal(map[string]any{
		"text": fmt.Sprintf("%s <%s|Open in Countersign>", slackEscape(msg.Text), msg.Link),
		"kind": msg.Kind, "link": msg.Link,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.cfg.WebhookURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("notify: webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := n.cfg.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("notify: webhook: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("notify: webhook answered %s", res.Status)
	}
	return nil
}

func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// sendMail sends a plain-text mail with the deep link.
func (n *Notifier) sendMail(msg Notice) error {
	var auth smtp.Auth
	if n.cfg.SMTPUser != "" {
		host, _, _ := strings.Cut(n.cfg.SMTPAddr, ":")
		auth = smtp.PlainAuth("", n.cfg.SMTPUser, n.cfg.SMTPPass, host)
	}
	subject := map[string]string{"arrived": "Waiting for approval", "deadline": "Approval deadline close",
		"unverified": "Result needs checking"}[msg.Kind]
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: [Countersign] %s\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n",
		n.cfg.From, strings.Join(n.cfg.To, ", "), subject)
	fmt.Fprintf(&b, "%s\r\n\r\nOpen it: %s\r\n", msg.Text, msg.Link)
	if err := smtp.SendMail(n.cfg.SMTPAddr, auth, n.cfg.From, n.cfg.To, []byte(b.String())); err != nil {
		return fmt.Errorf("notify: mail: %w", err)
	}
	return nil
}
