package locale

import (
	"context"
	"strconv"
	"time"

	"golang.org/x/text/language"

	"countersign/internal/money"
)

// Money is an amount as this language writes it (CLDR, through
// money.InLocale): "42,10 €" in French, "$42.10" in English. minor is in
// the currency's own minor units (cents; yen have none). The pseudo-locale
// writes amounts as English does: amounts are data, not text to translate.
func (l *Localizer) Money(minor int64, currency string) string {
	tag := l.tag
	if l.format != language.Und {
		tag = l.format
	}
	if tag == Pseudo {
		tag = language.English
	}
	return money.InLocale(minor, currency, tag.String())
}

// FormattingAs is l writing amounts as regional writes them (Money: CLDR's
// en-IE writes US dollars "US$42.10"), its texts still l's language's.
// regional language.Und, or a tag of another language, gives l.
func (l *Localizer) FormattingAs(regional language.Tag) *Localizer {
	lb, _ := l.tag.Base()
	rb, _ := regional.Base()
	if regional == language.Und || lb != rb {
		return l
	}
	out := *l
	out.format = regional
	return &out
}

// When is a moment as a customer's page writes it, in zone and naming it,
// by the catalogue's patterns: "Dec 2, 15:04 CET" in English, "2 déc.,
// 15:04 CET" in French, with the year when it is not now's year. The
// month names and patterns are messages (format.when, format.when.year,
// format.month.1 … 12), so a language added as a catalogue file brings
// its own.
func (l *Localizer) When(t time.Time, zone *time.Location, now time.Time) string {
	if zone == nil {
		zone = time.UTC
	}
	t = t.In(zone)
	p := l.dateParams(t)
	p["Time"] = t.Format("15:04")
	p["Zone"] = t.Format("MST")
	if t.Year() != now.In(zone).Year() {
		return l.T("format.when.year", p)
	}
	return l.T("format.when", p)
}

// Date is a day as a customer's page writes it ("Dec 2", "2 déc."), with
// the year when it is not now's year; t is read in its own zone.
func (l *Localizer) Date(t time.Time, now time.Time) string {
	p := l.dateParams(t)
	if t.Year() != now.In(t.Location()).Year() {
		return l.T("format.date.year", p)
	}
	return l.T("format.date", p)
}

// dateParams are a day's parameters of the date patterns. The first of a
// month is the language's format.day.1 where it writes it otherwise than
// the number ("1er" in French, CLDR's ordinal d-pattern for day 1).
func (l *Localizer) dateParams(t time.Time) Params {
	day := strconv.Itoa(t.Day())
	if t.Day() == 1 {
		if s, _ := l.Localize("format.day.1", nil, nil); s != "" {
			day = s
		}
	}
	return Params{
		"Day":   day,
		"Month": l.T("format.month."+strconv.Itoa(int(t.Month())), nil),
		"Year":  strconv.Itoa(t.Year()),
	}
}

// Money is an amount in the request's language (Localizer.Money).
func Money(ctx context.Context, minor int64, currency string) string {
	l, _ := From(ctx)
	return l.Money(minor, currency)
}

// When is a moment in the request's language (Localizer.When).
func When(ctx context.Context, t time.Time, zone *time.Location, now time.Time) string {
	l, _ := From(ctx)
	return l.When(t, zone, now)
}
