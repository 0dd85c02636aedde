package shopadapter

import (
	"strconv"
	"time"

	"golang.org/x/text/language"

	"countersign/internal/adapter"
	"countersign/internal/locale"
)

// texts writes the shop's customer-facing quote texts in one language,
// from the catalogue's shop.* messages (internal/locale/catalog/shop.<tag>.json):
// each sentence is one message with named parameters, amounts as the
// language writes them (Localizer.Money), dates as its long form with the
// year, since a quote is read again later, in a mail or a receipt.
type texts struct{ l *locale.Localizer }

// T is message shop.<id> with its parameters.
func (t texts) T(id string, p locale.Params) string { return t.l.T("shop."+id, p) }

// N is plural message shop.<id> for count.
func (t texts) N(id string, count int, p locale.Params) string { return t.l.N("shop."+id, count, p) }

// money is an amount in the currency's minor units as the language
// writes it: "$42.10", "42,10 $US".
func (t texts) money(minor int64, currency string) string { return t.l.Money(minor, currency) }

// minus is an amount held back, as the language writes a negative one:
// "−$12.00", "−12,00 $US".
func (t texts) minus(minor int64, currency string) string { return t.l.Money(-minor, currency) }

// date is a day in a sentence, UTC, with its year: "April 30, 2026",
// "30 avril 2026".
func (t texts) date(d time.Time) string {
	d = d.UTC()
	return t.T("date", locale.Params{"Day": strconv.Itoa(d.Day()), "Year": strconv.Itoa(d.Year()),
		"Month": t.T("month."+strconv.Itoa(int(d.Month())), nil)})
}

// english are the texts a quote is written in, and the assistant's
// refusals are.
func english() texts { return texts{locale.Installed().For(language.English)} }

// localized builds a quote with build once per language of the adapter's
// catalogue: the English quote is the one written (Locale "en"), the
// others its Translations. build must make the same lines in every
// language, which it does when only its texts depend on t.
func (a *Adapter) localized(build func(t texts) adapter.Quote) adapter.Quote {
	q := build(texts{a.texts.For(language.English)})
	q.Locale = language.English.String()
	q.Translations = map[string]adapter.QuoteWords{}
	for _, tag := range a.texts.Tags() {
		if tag == language.English {
			continue
		}
		q.Translations[tag.String()] = wordsOf(build(texts{a.texts.For(tag)}))
	}
	return q
}

// wordsOf are a quote's texts, the part a translation holds.
func wordsOf(q adapter.Quote) adapter.QuoteWords {
	w := adapter.QuoteWords{Title: q.Title, Consequences: q.Consequences, Constraints: q.Constraints,
		ConfirmLabel: q.ConfirmLabel, DeclineLabel: q.DeclineLabel, Lines: make([]adapter.QuoteLineWords, 0, len(q.Lines))}
	for _, l := range q.Lines {
		w.Lines = append(w.Lines, adapter.QuoteLineWords{Label: l.Label, From: l.From, To: l.To, Customer: l.Customer})
	}
	if c := q.Customer; c != nil {
		w.Customer = &adapter.CustomerWords{Title: c.Title, Reference: c.Reference, DateLabel: c.DateLabel, Items: c.Items,
			Why: c.Why, MoneyArrives: c.MoneyArrives}
	}
	return w
}

// items names an order's items in a title: "Walnut desk lamp", "Walnut
// desk lamp and 2 more items".
func (t texts) items(o shopOrder) string {
	switch len(o.Items) {
	case 0:
		return t.T("order.no_items", nil)
	case 1:
		return o.Items[0].Name
	}
	return t.N("order.items_more", len(o.Items)-1, locale.Params{"Name": o.Items[0].Name})
}

// withDoneWords gives q the action's done words (shop.done.<action>) in
// the language it is written in and in each of its translations: the
// headline of the customer's page once the request is carried out.
func (a *Adapter) withDoneWords(action string, q *adapter.Quote) {
	q.DoneWords = texts{a.texts.For(language.English)}.T("done."+action, nil)
	for loc, w := range q.Translations {
		w.DoneWords = texts{a.texts.For(language.Make(loc))}.T("done."+action, nil)
		q.Translations[loc] = w
	}
}
