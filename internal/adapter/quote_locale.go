package adapter

import (
	"golang.org/x/text/language"
)

// A quote is written in one locale (Quote.Locale, the system's default when
// empty) and may carry its texts in others (Quote.Translations). Its
// numbers, target, dates and lines' flags are the same in every locale; only
// the words a person reads differ, line by line in the same order. A page
// shows q.In(locale): the quote in the customer's locale, or the nearest
// one it has. The quote stored with a decision holds every translation and
// the decision records which locale was shown.

// QuoteWords are a quote's texts in one locale.
type QuoteWords struct {
	Title        string           `json:"title"`
	Lines        []QuoteLineWords `json:"lines"`
	Consequences []string         `json:"consequences"`
	Constraints  []string         `json:"constraints,omitempty"`
	ConfirmLabel string           `json:"confirm_label"`
	DeclineLabel string           `json:"decline_label"`
	DoneWords    string           `json:"done_words,omitempty"`
	Customer     *CustomerWords   `json:"customer,omitempty"`
}

// QuoteLineWords are one quote line's texts, the line at the same index of
// Quote.Lines.
type QuoteLineWords struct {
	Label    string `json:"label"`
	From     string `json:"from,omitempty"`
	To       string `json:"to"`
	Customer string `json:"customer,omitempty"`
}

// CustomerWords are CustomerFacts' texts in one locale; Date is the
// system's and the same in every locale. Reference and Items, when given,
// are the reference and items as this locale writes them ("Commande
// #245695"); a translation without them (one stored before they existed)
// is shown the quote's own.
type CustomerWords struct {
	Title        string   `json:"title,omitempty"`
	Reference    string   `json:"reference,omitempty"`
	DateLabel    string   `json:"date_label,omitempty"`
	Items        []string `json:"items,omitempty"`
	Why          []string `json:"why,omitempty"`
	MoneyArrives string   `json:"money_arrives,omitempty"`
}

// In is the quote as a customer reading locale (a BCP 47 tag) is shown
// it: the translation for the locale, else for its nearest parent
// ("fr-CA", then "fr"), else the quote as written. The copy has no
// Translations and says in Locale which it is written in. A translation
// whose lines do not match the quote's line for line is not used.
func (q Quote) In(locale string) Quote {
	out := q
	out.Translations = nil
	w, loc, ok := q.translation(locale)
	if !ok {
		return out
	}
	out.Locale = loc
	out.Title, out.ConfirmLabel, out.DeclineLabel = w.Title, w.ConfirmLabel, w.DeclineLabel
	out.Consequences, out.Constraints = w.Consequences, w.Constraints
	if w.DoneWords != "" {
		out.DoneWords = w.DoneWords
	}
	out.Lines = make([]QuoteLine, len(q.Lines))
	for i, l := range q.Lines {
		lw := w.Lines[i]
		l.Label, l.From, l.To, l.Customer = lw.Label, lw.From, lw.To, lw.Customer
		out.Lines[i] = l
	}
	if q.Customer != nil && w.Customer != nil {
		c := *q.Customer
		c.Title, c.DateLabel, c.Why, c.MoneyArrives = w.Customer.Title, w.Customer.DateLabel, w.Customer.Why, w.Customer.MoneyArrives
		if w.Customer.Reference != "" {
			c.Reference = w.Customer.Reference
		}
		if w.Customer.Items != nil {
			c.Items = w.Customer.Items
		}
		out.Customer = &c
	}
	return out
}

// translation finds the words for locale or its nearest parent, short of
// the root and of the locale the quote is written in.
func (q Quote) translation(locale string) (QuoteWords, string, bool) {
	tag, err := language.Parse(locale)
	if err != nil || len(q.Translations) == 0 {
		return QuoteWords{}, "", false
	}
	for ; tag != language.Und; tag = tag.Parent() {
		loc := tag.String()
		if loc == q.Locale {
			return QuoteWords{}, "", false
		}
		if w, ok := q.Translations[loc]; ok && len(w.Lines) == len(q.Lines) {
			return w, loc, true
		}
	}
	return QuoteWords{}, "", false
}
