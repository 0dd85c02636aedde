package controlplane

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/consent"
	"countersign/internal/stepup"
	"countersign/store"
)

// Showing is d deciding on inv as a page rendered it: the version and
// the digest of the quote JSON the page showed (inv.QuoteJSON). Every
// door that carries a customer's decision sets them from what it
// rendered, never from the request as it is now.
func (d CustomerDecision) Showing(inv Invocation) (CustomerDecision, error) {
	digest, err := consent.QuoteDigest(inv.QuoteJSON)
	if err != nil {
		return d, err
	}
	d.QuoteVersion, d.QuoteDigest = inv.Version, digest
	return d, nil
}

// ErrQuoteChanged is the refusal of a decision on a quote that is not
// the request's current one: the customer decided on something they no
// longer see.
func ErrQuoteChanged() error {
	return &apperr.Error{Kind: apperr.Conflict, Code: "quote_changed",
		Message: "The quote changed since this page showed it, so nothing was decided.",
		Hint:    "Look at the request again and decide on what it says now."}
}

// shownQuote checks that d decides on row's current quote: the version
// and the digest the page showed are the request's, the digest computed
// here from the stored quote. A passkey assertion must be evidence of
// this decision on that quote (consent.Evidence.Verify); the passkey
// is the customer's registered one (customerPasskeyProof, first). It returns the
// evidence to record.
func shownQuote(row store.Invocation, actor Actor, d CustomerDecision) (consent.Evidence, error) {
	digest, err := consent.QuoteDigest(row.Quote)
	if err != nil {
		return consent.Evidence{}, err
	}
	if d.QuoteVersion != row.Version || !bytes.Equal(d.QuoteDigest, digest) {
		return consent.Evidence{}, ErrQuoteChanged()
	}
	ev := consent.Evidence{Proof: actor.Proof, Decision: string(d.Verb), QuoteVersion: int64(row.Version), QuoteDigest: digest, Passkey: d.Passkey}
	if err := ev.Verify(row.ID, row.Quote); err != nil {
		return consent.Evidence{}, &apperr.Error{Kind: apperr.Forbidden, Code: "passkey_not_for_this_decision",
			Message: "The passkey's signature is not for this decision on this quote, so nothing was decided.",
			Hint:    "Decide again on the page, with the passkey when it asks."}
	}
	return ev, nil
}

// recordConsent keeps ev, the evidence of the customer's decision on
// row, in the decision's transaction.
func (s *Service) recordConsent(ctx context.Context, tx *store.Tx, actor Actor, row store.Invocation, ev consent.Evidence) error {
	argsHash := row.ApprovedArgsHash
	if argsHash == nil {
		argsHash = row.ArgsHash
	}
	c := store.Consent{InvocationID: row.ID, CustomerRef: actor.ID, Proof: ev.Proof, Decision: ev.Decision,
		QuoteVersion: int32(ev.QuoteVersion), QuoteDigest: ev.QuoteDigest, Quote: row.Quote, ArgsHash: argsHash, DecidedAt: s.now()}
	if p := ev.Passkey; p != nil {
		c.CredentialID, c.PublicKey, c.RPID, c.Origin = p.CredentialID, p.PublicKey, &p.RPID, &p.Origin
		c.AuthenticatorData, c.ClientDataJSON, c.Signature = p.AuthenticatorData, p.ClientDataJSON, p.Signature
	}
	return tx.InsertConsent(ctx, c)
}

// CustomerConsent is a customer's recorded decision on a request: the
// evidence (internal/consent), the quote they were shown as stored, the
// hash of the arguments that quote was made from, and when.
type CustomerConsent struct {
	consent.Evidence
	Customer string
	Quote    json.RawMessage
	ArgsHash []byte
	At       time.Time
	// Locale is the language the customer's page was in when they
	// decided (a BCP 47 tag; empty for a decision recorded before pages
	// were translated). The stored quote keeps every translation, so
	// adapter.Quote.In(Locale) is the quote exactly as they read it.
	Locale string
}

// Consent returns the customer's recorded decision on invocationID;
// ok is false when no customer decided it (the policy or the staff did,
// or it was decided before consents were recorded).
func (s *Service) Consent(ctx context.Context, invocationID string) (CustomerConsent, bool, error) {
	c, err := s.store.ConsentOf(ctx, invocationID)
	if errors.Is(err, store.ErrNotFound) {
		return CustomerConsent{}, false, nil
	}
	if err != nil {
		return CustomerConsent{}, false, err
	}
	out := CustomerConsent{Evidence: consent.Evidence{Proof: c.Proof, Decision: c.Decision, QuoteVersion: int64(c.QuoteVersion), QuoteDigest: c.QuoteDigest},
		Customer: c.CustomerRef, Quote: c.Quote, ArgsHash: c.ArgsHash, At: c.DecidedAt}
	if c.Signature != nil {
		out.Passkey = &stepup.Assertion{CredentialID: c.CredentialID, PublicKey: c.PublicKey, RPID: deref(c.RPID), Origin: deref(c.Origin),
			AuthenticatorData: c.AuthenticatorData, ClientDataJSON: c.ClientDataJSON, Signature: c.Signature}
	}
	if out.Locale, err = s.decidedLocale(ctx, invocationID); err != nil {
		return CustomerConsent{}, false, err
	}
	return out, true, nil
}

// decidedLocale is the language recorded with the customer's decision on
// invocationID: the audit event written in the consent's transaction
// (confirmed or declined, by the customer) carries it as "locale".
func (s *Service) decidedLocale(ctx context.Context, invocationID string) (string, error) {
	events, err := s.store.EventsForInvocation(ctx, invocationID)
	if err != nil {
		return "", err
	}
	for _, e := range events {
		if e.ActorKind != string(ActorCustomer) ||
			(e.Action != string(EventInvocationConfirmed) && e.Action != string(EventInvocationDeclined)) {
			continue
		}
		var data struct {
			Locale string `json:"locale"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil {
			return "", err
		}
		return data.Locale, nil
	}
	return "", nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
