package main

import (
	"log/slog"
	"time"

	"countersign/internal/notify"
	"countersign/store"
)

// notifier builds the console's notifier from the configuration; with no
// webhook and no mail server it is disabled.
func (c config) notifier(st *store.Store, log *slog.Logger) *notify.Notifier {
	base := c.publicBase()
	// The mail server may serve customers' codes alone: notices go by mail
	// only to configured recipients.
	smtpAddr := c.SMTPAddr
	if len(splitList(c.NotifyTo)) == 0 {
		smtpAddr = ""
	}
	return notify.New(notify.Config{BaseURL: base, WebhookURL: c.NotifyWebhook, SMTPAddr: smtpAddr, SMTPUser: c.SMTPUser,
		SMTPPass: c.SMTPPassword, From: c.NotifyFrom, To: splitList(c.NotifyTo), DeadlineWarning: c.DeadlineWarning}, st, time.Now, log)
}

// publicBase is the console's address for links sent out of it (notices,
// outcome webhooks): -public-url, else the listening address.
func (c config) publicBase() string {
	if c.PublicURL != "" {
		return c.PublicURL
	}
	if c.tls() {
		return "https://" + c.Addr
	}
	return "http://" + c.Addr
}
