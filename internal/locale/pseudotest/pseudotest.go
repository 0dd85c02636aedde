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
	"golang.org/x/net/html"
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
func Strays(doc string, data ...string) []string { return strays(doc, false, data) }

// SentenceStrays is Strays for a page whose catalogue sentences hold
// elements (views.Say, consoleSaid, a mail's <bdi>): an element's text is
// read together with that of the inline elements it holds (a parameter's
// <bdi>, a <time>, a link, words for screen readers, a <strong> word), as
// the sentence writes them inside it, so no caller unwraps them first;
// the attributes are still read on every element. What an inline element
// holds inside a sentence's brackets is taken for the sentence's, so a
// test that cares checks such an element's text itself (a <time> written
// by the catalogue's patterns).
func SentenceStrays(doc string, data ...string) []string { return strays(doc, true, data) }

func strays(doc string, sentences bool, data []string) []string {
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
			switch {
			case !sentences:
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.TextNode {
						check("<"+name+">", c.Data)
					}
				}
			case !inline[name]:
				for _, text := range runs(n) {
					check("<"+name+">", text)
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

// inline are the elements a catalogue sentence holds inside it: their
// text is read as part of the sentence around them.
var inline = map[string]bool{"a": true, "b": true, "bdi": true, "code": true, "s": true, "span": true, "strong": true, "time": true}

// runs are the texts of n's children: each run of text and inline
// elements between two other elements is one.
func runs(n *html.Node) []string {
	var out []string
	var run strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode:
			run.WriteString(c.Data)
		case c.Type == html.ElementNode && inline[c.Data]:
			inlineText(&run, c)
		default:
			out = append(out, run.String())
			run.Reset()
		}
	}
	return append(out, run.String())
}

// inlineText writes the text of the inline element n, and of the inline
// elements inside it, to run; another element inside it is a sentence of
// its own, read when Strays reaches it.
func inlineText(run *strings.Builder, n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode:
			run.WriteString(c.Data)
		case c.Type == html.ElementNode && inline[c.Data]:
			inlineText(run, c)
		}
	}
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
