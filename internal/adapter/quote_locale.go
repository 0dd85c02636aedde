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
// system's and the same in every locale. Reference, Items and Why, when
// given, are the reference, items and reasons as this locale writes them
// ("Commande #245695"); a translation without them (one stored before
// they existed) is shown the quote's own, so no reason goes unsaid.
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
// that does not match the quote text for text (fits) is not used.
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
		c.Title, c.DateLabel, c.MoneyArrives = w.Customer.Title, w.Customer.DateLabel, w.Customer.MoneyArrives
		if w.Customer.Why != nil {
			c.Why = w.Customer.Why
		}
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
		if w, ok := q.Translations[loc]; ok && q.fits(w) {
			return w, loc, true
		}
	}
	return QuoteWords{}, "", false
}

// fits says whether w holds as many texts as q of each kind a customer
// reads: every line and consequence, and the customer's reasons and
// items when it gives them. A translation that dropped one would show a
// reader of its language less than the written quote says (a consequence
// such as "A refund cannot be undone"), so it is not shown at all.
func (q Quote) fits(w QuoteWords) bool {
	if len(w.Lines) != len(q.Lines) || len(w.Consequences) != len(q.Consequences) {
		return false
	}
	if q.Customer == nil || w.Customer == nil {
		return true
	}
	return (w.Customer.Why == nil || len(w.Customer.Why) == len(q.Customer.Why)) &&
		(w.Customer.Items == nil || len(w.Customer.Items) == len(q.Customer.Items))
}
