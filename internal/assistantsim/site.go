package assistantsim

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"countersign/internal/confirmation"
)

// vouch is what the business's site hands the assistant's widget when a
// signed-in customer starts a conversation: a task assertion for this
// customer and assistant, living five minutes, good for one task. Empty
// without a site secret.
func (o Options) vouch(now time.Time) string {
	if len(o.SiteSecret) == 0 {
		return ""
	}
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	return confirmation.SignTaskAssertion(o.SiteSecret, confirmation.Assertion{Sub: o.Customer, Sys: o.SiteSystem,
		Aud: o.Assistant, IssuedAt: now.Unix(), ExpiresAt: now.Add(5 * time.Minute).Unix(), Nonce: hex.EncodeToString(nonce)})
}
