package demo

import (
	"context"

	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/lists"
)

// Speaker is a demo customer whose shop record names a language other
// than English, with the request waiting for them: its pages and mails
// are in their language, as the shop's word on it decides.
type Speaker struct {
	Name, Email string
	// Locale is the language the shop's customer record names
	// (internal/demoshop's seed), and Language its English name.
	Locale, Language string
	Link             Link
}

// speakers are the demo's customers in other languages, each with one
// request to confirm: the shop's seed gives their records the locale.
var speakers = []struct {
	name, email, locale, language string
	proposal                      proposal
}{
	{"Camille Dubois", "camille.dubois@example.fr", "fr", "French",
		proposal{"issue_refund", map[string]any{"order_id": "pour-over", "amount_cents": 3800, "reason_code": "damaged"},
			"Refund the chipped pour-over set."}},
	{"Lena Fischer", "lena.fischer@example.de", "de", "German",
		proposal{"change_shipping_address", map[string]any{"order_id": "paper filters", "address": map[string]any{
			"name": "Lena Fischer", "line1": "Schanzenstraße 41", "city": "Hamburg", "postal_code": "20357", "country": "DE"}},
			"Ship the paper filters to Schanzenstraße 41, Hamburg."}},
	{"Fatima Al-Sayed", "fatima@alsayed.example", "ar", "Arabic",
		proposal{"issue_refund", map[string]any{"order_id": "water bottle", "amount_cents": 2200, "reason_code": "damaged"},
			"Refund the cracked water bottle."}},
}

// seedSpeakers makes sure each customer in another language has their
// request waiting (the actions are on stage 4 already, seedConfirmations),
// and returns a fresh link to each.
func seedSpeakers(ctx context.Context, cp *controlplane.Service, ls *lists.Service, links *confirmation.Service) ([]Speaker, error) {
	out := make([]Speaker, 0, len(speakers))
	for _, s := range speakers {
		l, err := seedPending(ctx, cp, ls, links, s.email, []proposal{s.proposal})
		if err != nil {
			return nil, err
		}
		out = append(out, Speaker{Name: s.name, Email: s.email, Locale: s.locale, Language: s.language, Link: l[0]})
	}
	return out, nil
}
