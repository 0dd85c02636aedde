package shopadapter

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// longDate is a date in a sentence: "April 30, 2026" (UTC).
func longDate(t time.Time) string { return t.UTC().Format("January 2, 2006") }

// shortDate is a date in a label: "20 Mar" (UTC).
func shortDate(t time.Time) string { return t.UTC().Format("2 Jan") }

// lastDay is the last calendar day before the instant end: a period ending
// at midnight was last used the day before.
func lastDay(end time.Time) time.Time {
	end = end.UTC()
	if end.Hour() == 0 && end.Minute() == 0 && end.Second() == 0 && end.Nanosecond() == 0 {
		return end.AddDate(0, 0, -1)
	}
	return end
}

// calendarDays counts whole calendar days (UTC dates) from from to to:
// delivered yesterday at 23:59 is one day ago at 00:01 today.
func calendarDays(from, to time.Time) int {
	day := func(t time.Time) time.Time {
		t = t.UTC()
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	}
	return int(day(to).Sub(day(from)) / (24 * time.Hour))
}

// shorten cuts text to at most n characters for a quote line.
func shorten(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	runes := []rune(text)
	return strings.TrimSpace(string(runes[:n-1])) + "…"
}

// words turns an enum value into words: "too_expensive" → "too expensive".
func words(code string) string { return strings.ReplaceAll(code, "_", " ") }

// plural writes "1 item", "3 items".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
