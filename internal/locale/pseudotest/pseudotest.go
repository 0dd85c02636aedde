// Package pseudotest finds, in a page or a mail rendered in the
// pseudo-locale (locale.Pseudo), the visible text that did not come from a
// message catalogue. Tests of every customer-facing surface use it: a
// sentence written in code shows as plain English among the ⟦accented⟧
// catalogue texts.
package pseudotest

import (
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/PuerkitoBio/goquery"
)

// span is one catalogue text with nothing nested inside it; removing the
// innermost first takes away a pattern's text together with the
// parameters inside it ("⟦⟦Déc⟧ 2, 10:04 CET⟧").
var span = regexp.MustCompile(`⟦[^⟦⟧]*⟧`)

// Strays is the visible text of doc (HTML) that is neither a catalogue
// text nor one of data (the business's own words: its name, an order's
// reference, a customer's name), with the element it is in. Text is read
// from text nodes outside script, style and template, and from the
// attributes a person is given: alt, title, aria-label, placeholder and a
// button's value. Words without letters (amounts, times, ids of digits)
// are not text to translate.
func Strays(doc string, data ...string) []string {
	d, err := goquery.NewDocumentFromReader(strings.NewReader(doc))
	if err != nil {
		return []string{"unreadable HTML: " + err.Error()}
	}
	var out []string
	check := func(where, text string) {
		if rest := Stray(text, data...); rest != "" {
			out = append(out, where+": "+strings.TrimSpace(text))
		}
	}
	d.Find("*").Each(func(_ int, s *goquery.Selection) {
		name := goquery.NodeName(s)
		switch name {
		case "script", "style", "template", "noscript":
			return
		}
		for _, n := range s.Nodes {
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == 1 { // html.TextNode
					check("<"+name+">", c.Data)
				}
			}
		}
		for _, attr := range []string{"alt", "title", "aria-label", "placeholder"} {
			if v, ok := s.Attr(attr); ok {
				check("<"+name+" "+attr+">", v)
			}
		}
		if t, _ := s.Attr("type"); name == "input" && (t == "submit" || t == "button") {
			if v, ok := s.Attr("value"); ok {
				check("<input value>", v)
			}
		}
	})
	return out
}

// Stray is what is left of text once the catalogue texts and the data
// are taken out, if it still holds a letter; "" when text is clean.
func Stray(text string, data ...string) string {
	for {
		next := span.ReplaceAllString(text, " ")
		if next == text {
			break
		}
		text = next
	}
	// The longest first: a short datum inside a longer one ("Refund
	// $42.10" in "Refund $42.10 for your lamp") must not cut it apart.
	data = append([]string(nil), data...)
	sort.Slice(data, func(i, j int) bool { return len(data[i]) > len(data[j]) })
	for _, d := range data {
		if d != "" {
			text = strings.ReplaceAll(text, d, " ")
		}
	}
	if strings.IndexFunc(text, unicode.IsLetter) < 0 {
		return ""
	}
	return strings.TrimSpace(text)
}
