package confirmation

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/money"
)

// mailQuote is a request's quote as a mail carries it: every line the
// customer's page shows, in the business's name and clock. A person who
// decides from the mail has read the whole change, not what an assistant
// said it was.
type mailQuote struct {
	Shop      string
	Title     string
	Reference string
	Date      string
	Items     []string
	Lines     []mailLine
	// Amount is the money moved, when no emphasised line carries it.
	Amount       string
	Why          []string
	MoneyArrives string
	Effective    string
	Consequences []string
	Deadline     string
}

// mailLine is one quote line: the adapter's sentence for customers when
// it gives one, else the label and its value, or the change from → to.
type mailLine struct {
	Sentence, Label, From, To string
	Emphasis                  bool
}

// text is the line in words, as the plain part writes it.
func (l mailLine) text() string {
	switch {
	case l.Sentence != "":
		return l.Sentence
	case l.From != "":
		return l.Label + ": " + l.From + " → " + l.To
	}
	return l.Label + ": " + l.To
}

// quoteForMail builds inv's quote as the page shows it (the customer's
// title, reference, date, items, lines, amount, why, when the money
// arrives, when it takes effect, the consequences and the deadline), its
// times in brand's zone with the zone named.
func quoteForMail(inv controlplane.Invocation, brand adapter.Brand, now time.Time) mailQuote {
	zone := brand.Zone
	if zone == nil {
		zone = time.UTC
	}
	at := func(t time.Time) string {
		t = t.In(zone)
		if t.Year() != now.In(zone).Year() {
			return t.Format("Jan 2, 2006, 15:04 MST")
		}
		return t.Format("Jan 2, 15:04 MST")
	}
	q := inv.Quote
	m := mailQuote{Shop: shopName(inv.System, brand), Title: q.Title, Consequences: q.Consequences}
	if cf := q.Customer; cf != nil {
		if cf.Title != "" {
			m.Title = cf.Title
		}
		m.Reference, m.Items, m.Why, m.MoneyArrives = cf.Reference, cf.Items, cf.Why, cf.MoneyArrives
		if cf.Date != nil {
			label := cf.DateLabel
			if label == "" {
				label = "Date"
			}
			m.Date = label + " " + at(*cf.Date)
		}
	}
	shown := false
	for _, l := range q.Lines {
		m.Lines = append(m.Lines, mailLine{Sentence: l.Customer, Label: l.Label, From: l.From, To: l.To, Emphasis: l.Emphasis})
		if q.AmountCents != nil && l.Emphasis && l.To == money.Format(*q.AmountCents, q.Currency) {
			shown = true
		}
	}
	if q.AmountCents != nil && !shown {
		m.Amount = money.Format(*q.AmountCents, q.Currency)
	}
	if q.EffectiveAt != nil {
		m.Effective = at(*q.EffectiveAt)
	}
	if inv.DeadlineAt != nil {
		m.Deadline = at(*inv.DeadlineAt)
	}
	return m
}

// shopName is the business's name as its mails give it; the system's
// name when its brand has no usable one.
func shopName(system string, brand adapter.Brand) string {
	if adapter.CheckBrandName(brand.Name) != nil {
		return system
	}
	return brand.Name
}

// plainHead is the request in three lines: what, which object, where.
func (m mailQuote) plainHead(b *strings.Builder) {
	fmt.Fprintf(b, "    %s\n", m.Title)
	if m.Reference != "" {
		fmt.Fprintf(b, "    %s\n", m.Reference)
	}
	fmt.Fprintf(b, "    at %s\n", m.Shop)
}

// plainBody is the rest of the quote, as the plain part writes it.
func (m mailQuote) plainBody(b *strings.Builder) {
	if m.Date != "" {
		fmt.Fprintf(b, "%s\n", m.Date)
	}
	for _, it := range m.Items {
		fmt.Fprintf(b, "  • %s\n", it)
	}
	b.WriteString("\nWhat changes:\n")
	for _, l := range m.Lines {
		fmt.Fprintf(b, "  • %s\n", l.text())
	}
	if m.Amount != "" {
		fmt.Fprintf(b, "  • Amount: %s\n", m.Amount)
	}
	for _, w := range m.Why {
		fmt.Fprintf(b, "  Why: %s\n", w)
	}
	if m.MoneyArrives != "" {
		fmt.Fprintf(b, "If you confirm, the money arrives: %s\n", m.MoneyArrives)
	}
	if m.Effective != "" {
		fmt.Fprintf(b, "Takes effect: %s\n", m.Effective)
	}
	if len(m.Consequences) > 0 {
		b.WriteString("\nWhat this means for you if you confirm:\n")
		for _, c := range m.Consequences {
			fmt.Fprintf(b, "  • %s\n", c)
		}
	}
	if m.Deadline != "" {
		fmt.Fprintf(b, "\nPlease decide by %s. Until you confirm, nothing changes.\n", m.Deadline)
	}
}

// plain is the whole quote as plain text.
func (m mailQuote) plain() string {
	var b strings.Builder
	m.plainHead(&b)
	b.WriteString("\n")
	m.plainBody(&b)
	return b.String()
}

// quoteHTML renders the quote, escaped, for a mail's HTML part; the
// plain part says the same.
var quoteHTML = template.Must(template.New("quote").Parse(`<h2 style="font-size:18px;margin:0 0 4px">{{.Title}}</h2>
<p style="margin:0 0 12px;color:#555">{{if .Reference}}{{.Reference}} · {{end}}{{.Shop}}{{if .Date}} · {{.Date}}{{end}}</p>
{{if .Items}}<ul>
{{range .Items}}<li>{{.}}</li>
{{end}}</ul>{{end}}
<h3 style="font-size:15px">What changes</h3>
<table cellpadding="4" style="border-collapse:collapse">
{{range .Lines}}<tr>{{if .Sentence}}<td colspan="2"{{if .Emphasis}} style="font-weight:bold"{{end}}>{{.Sentence}}</td>{{else}}<th align="left">{{.Label}}</th><td{{if .Emphasis}} style="font-weight:bold"{{end}}>{{if .From}}<s>{{.From}}</s> → {{end}}{{.To}}</td>{{end}}</tr>
{{end}}{{if .Amount}}<tr><th align="left">Amount</th><td style="font-weight:bold">{{.Amount}}</td></tr>
{{end}}</table>
{{range .Why}}<p>Why: {{.}}</p>
{{end}}{{if .MoneyArrives}}<p>If you confirm, the money arrives: {{.MoneyArrives}}</p>
{{end}}{{if .Effective}}<p>Takes effect: {{.Effective}}</p>
{{end}}{{if .Consequences}}<h3 style="font-size:15px">What this means for you if you confirm</h3>
<ul>
{{range .Consequences}}<li>{{.}}</li>
{{end}}</ul>{{end}}
{{if .Deadline}}<p>Please decide by {{.Deadline}}. Until you confirm, nothing changes.</p>{{end}}
`))

// html is the whole quote as escaped HTML.
func (m mailQuote) html() string {
	var b strings.Builder
	// The template is fixed and its data strings: it cannot fail.
	_ = quoteHTML.Execute(&b, m)
	return b.String()
}

// htmlPage wraps body in a mail's HTML document.
func htmlPage(title, body string) string {
	return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>` + template.HTMLEscapeString(title) + `</title></head>
<body style="font-family:sans-serif;max-width:36em;margin:0 auto;padding:16px;color:#222">
` + body + `</body></html>
`
}
