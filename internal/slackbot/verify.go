package slackbot

import (
	"context"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"countersign/internal/apperr"
)

// signatureWindow is how far a request's timestamp may be from now
// (slack.NewSecretsVerifier's window); a signature is remembered twice as
// long, so a replay inside the window always finds it.
const signatureWindow = 5 * time.Minute

// Verify checks a request as Slack signs it: X-Slack-Signature is "v0="
// and the hex HMAC-SHA256, under the signing secret, of
// "v0:<X-Slack-Request-Timestamp>:<body>"; the timestamp is within five
// minutes of now; and the signature was not taken before (a replay). Any
// failure is apperr.Unauthenticated and nothing of the body is read.
func (b *Bot) Verify(ctx context.Context, h http.Header, body []byte) error {
	refused := &apperr.Error{Kind: apperr.Unauthenticated, Code: "slack_signature",
		Message: "This request is not signed by Slack with this app's signing secret, or its signature is too old."}
	if b.cfg.SigningSecret == "" {
		return refused
	}
	sv, err := slack.NewSecretsVerifier(h, b.cfg.SigningSecret)
	if err != nil {
		return refused
	}
	if _, err := sv.Write(body); err != nil {
		return refused
	}
	if err := sv.Ensure(); err != nil {
		return refused
	}
	sig, err := hex.DecodeString(strings.TrimPrefix(h.Get("X-Slack-Signature"), "v0="))
	if err != nil {
		return refused
	}
	ts, err := strconv.ParseInt(h.Get("X-Slack-Request-Timestamp"), 10, 64)
	if err != nil {
		return refused
	}
	// The window is the verifier's, on the wall clock; so is forgetting.
	first, err := b.store.SeeSlackRequest(ctx, sig, time.Unix(ts, 0), time.Now().Add(-2*signatureWindow))
	if err != nil {
		return err
	}
	if !first {
		return &apperr.Error{Kind: apperr.Unauthenticated, Code: "slack_replay",
			Message: "This signed request was already taken; a replay decides nothing."}
	}
	return nil
}
