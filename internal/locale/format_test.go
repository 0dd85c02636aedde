package locale_test

import (
	"testing"
	"time"

	"golang.org/x/text/language"

	"countersign/internal/locale"
)

// TestWhenAndDateFollowTheLanguage: moments and days are written by each
// language's catalogue patterns and month names, in the zone given, with
// the year only when it is not now's.
func TestWhenAndDateFollowTheLanguage(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 2, 9, 4, 0, 0, time.UTC)
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	later := time.Date(2027, 1, 3, 0, 0, 0, 0, time.UTC)
	c := locale.Shipped()
	for _, tc := range []struct {
		tag                  string
		when, whenYear, date string
	}{
		{"en", "Dec 2, 10:04 CET", "Dec 2, 2026, 10:04 CET", "Dec 2"},
		{"fr", "2 déc., 10:04 CET", "2 déc. 2026, 10:04 CET", "2 déc."},
		{"de", "2. Dez., 10:04 CET", "2. Dez. 2026, 10:04 CET", "2. Dez."},
		{"es", "2 dic, 10:04 CET", "2 dic 2026, 10:04 CET", "2 dic"},
		{"ar", "2 ديسمبر، 10:04 CET", "2 ديسمبر 2026، 10:04 CET", "2 ديسمبر"},
	} {
		l := c.For(language.MustParse(tc.tag))
		if got := l.When(at, paris, now); got != tc.when {
			t.Errorf("%s When: %q; want %q", tc.tag, got, tc.when)
		}
		if got := l.When(at, paris, later); got != tc.whenYear {
			t.Errorf("%s When a year on: %q; want %q", tc.tag, got, tc.whenYear)
		}
		if got := l.Date(at, now); got != tc.date {
			t.Errorf("%s Date: %q; want %q", tc.tag, got, tc.date)
		}
	}
	first := time.Date(2026, 12, 1, 9, 4, 0, 0, time.UTC)
	for tag, want := range map[string]string{"en": "Dec 1", "fr": "1er déc.", "de": "1. Dez.", "es": "1 dic", "ar": "1 ديسمبر"} {
		if got := c.For(language.MustParse(tag)).Date(first, now); got != want {
			t.Errorf("%s the first of the month: %q; want %q", tag, got, want)
		}
	}
	if got := c.For(language.French).When(first, paris, now); got != "1er déc., 10:04 CET" {
		t.Errorf("fr When on the first: %q; want 1er", got)
	}
	if got := c.For(language.English).When(at, nil, now); got != "Dec 2, 09:04 UTC" {
		t.Errorf("no zone: %q; want UTC", got)
	}
}

// TestMoneyFollowsTheLanguage: amounts go through CLDR for the
// localizer's language; the pseudo-locale writes them as English does.
func TestMoneyFollowsTheLanguage(t *testing.T) {
	c, err := locale.Load(locale.WithPseudo())
	if err != nil {
		t.Fatal(err)
	}
	for tag, want := range map[string]string{"en": "€42.10", "fr": "42,10\u00a0€", "de": "42,10\u00a0€"} {
		if got := c.For(language.MustParse(tag)).Money(4210, "EUR"); got != want {
			t.Errorf("%s: %q; want %q", tag, got, want)
		}
	}
	if got := c.For(locale.Pseudo).Money(4210, "EUR"); got != "€42.10" {
		t.Errorf("pseudo: %q; want English's", got)
	}
	if got := c.For(language.French).Money(4210, "JPY"); got != "4\u202f210\u00a0JPY" && got != "4\u202f210\u00a0¥" {
		t.Errorf("fr JPY: %q", got)
	}
}
