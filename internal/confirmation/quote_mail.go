package confirmation

import (
	"html"
	"strings"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/mail"
	"countersign/internal/money"
)

// mailQuote is a request's quote as a mail carries it: every line the
// customer's page shows, in the customer's language (the quote's
// translation, amounts and times as the language writes them), the
// business's name and clock. A person who decides from the mail has read
// the whole change, not what an assistant said it was.
type mailQuote struct {
	l         *locale.Localizer
	Shop      string
	Title     string
	Reference string
	// DateLabel and Date are the customer's date line: the quote's label
	// (or the catalogue's "Date") and the moment.
	DateLabel, Date string
	Items           []string
	Lines           []mailLine
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

// quoteForMail builds inv's quote as the page shows it, in l's language
// (quote.In): the customer's title, reference, date, items, lines,
// amount, why, when the money arrives, when it takes effect, the
// consequences and the deadline, its times in brand's zone with the zone
// named.
func quoteForMail(l *locale.Localizer, inv controlplane.Invocation, brand adapter.Brand, now time.Time) mailQuote {
	zone := brand.Zone
	if zone == nil {
		zone = time.UTC
	}
	at := func(t time.Time) string { return l.When(t, zone, now) }
	q := inv.Quote.In(l.Tag().String())
	m := mailQuote{l: l, Shop: shopName(inv.System, brand), Title: q.Title, Consequences: q.Consequences}
	if cf := q.Customer; cf != nil {
		if cf.Title != "" {
			m.Title = cf.Title
		}
		m.Reference, m.Items, m.Why, m.MoneyArrives = cf.Reference, cf.Items, cf.Why, cf.MoneyArrives
		if cf.Date != nil {
			m.DateLabel = cf.DateLabel
			if m.DateLabel == "" {
				m.DateLabel = l.T("mail.quote.date.label", nil)
			}
			m.Date = at(*cf.Date)
		}
	}
	shown := false
	for _, ln := range q.Lines {
		m.Lines = append(m.Lines, mailLine{Sentence: ln.Customer, Label: ln.Label, From: ln.From, To: ln.To, Emphasis: ln.Emphasis})
		if q.AmountCents != nil && ln.Emphasis && (ln.To == money.Format(*q.AmountCents, q.Currency) || ln.To == l.Money(*q.AmountCents, q.Currency)) {
			shown = true
		}
	}
	if q.AmountCents != nil && !shown {
		m.Amount = l.Money(*q.AmountCents, q.Currency)
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

// text is line ln in words, as the plain part writes it.
func (m mailQuote) text(ln mailLine) string {
	switch {
	case ln.Sentence != "":
		return ln.Sentence
	case ln.From != "":
		// The change is isolated side by side, not as one value: its
		// arrow then points the way the language reads.
		return m.l.T("mail.quote.line", locale.Params{"Label": m.l.Isolate(ln.Label),
			"Value": m.l.Text("mail.quote.fromto", locale.Params{"From": ln.From, "To": ln.To})})
	}
	return m.l.Text("mail.quote.line", locale.Params{"Label": ln.Label, "Value": ln.To})
}

// plainHead is the request in three lines: what, which object, where.
func (m mailQuote) plainHead(b *strings.Builder) {
	b.WriteString("    " + m.Title + "\n")
	if m.Reference != "" {
		b.WriteString("    " + m.Reference + "\n")
	}
	b.WriteString("    " + m.l.Text("mail.quote.at", locale.Params{"Shop": m.Shop}) + "\n")
}

// plainBody is the rest of the quote, as the plain part writes it.
func (m mailQuote) plainBody(b *strings.Builder) {
	t := m.l.Text
	if m.Date != "" {
		b.WriteString(t("mail.quote.date", locale.Params{"Label": m.DateLabel, "When": m.Date}) + "\n")
	}
	for _, it := range m.Items {
		b.WriteString("  • " + it + "\n")
	}
	b.WriteString("\n" + t("mail.quote.changes", nil) + "\n")
	for _, ln := range m.Lines {
		b.WriteString("  • " + m.text(ln) + "\n")
	}
	if m.Amount != "" {
		b.WriteString("  • " + m.l.T("mail.quote.line", locale.Params{"Label": t("mail.quote.amount", nil), "Value": m.l.Isolate(m.Amount)}) + "\n")
	}
	for _, w := range m.Why {
		b.WriteString("  " + t("mail.quote.why", locale.Params{"Why": w}) + "\n")
	}
	if m.MoneyArrives != "" {
		b.WriteString(t("mail.quote.money_arrives", locale.Params{"When": m.MoneyArrives}) + "\n")
	}
	if m.Effective != "" {
		b.WriteString(t("mail.quote.effective", locale.Params{"When": m.Effective}) + "\n")
	}
	if len(m.Consequences) > 0 {
		b.WriteString("\n" + t("mail.quote.consequences", nil) + "\n")
		for _, c := range m.Consequences {
			b.WriteString("  • " + c + "\n")
		}
	}
	if m.Deadline != "" {
		b.WriteString("\n" + t("mail.quote.deadline", locale.Params{"When": m.Deadline}) + "\n")
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

// bdi is the business's text d, escaped and isolated: a Latin name or
// reference inside an Arabic mail keeps its own direction.
func bdi(d string) string { return "<bdi>" + html.EscapeString(d) + "</bdi>" }

// html renders the quote, escaped, for a mail's HTML part; the plain part
// says the same. Cells align to the start of the line, so an Arabic mail
// reads from the right.
func (m mailQuote) html() string {
	l := m.l
	var b strings.Builder
	b.WriteString(`<h2 style="font-size:18px;margin:0 0 4px">` + bdi(m.Title) + "</h2>\n")
	b.WriteString(`<p style="margin:0 0 12px;color:#555">`)
	if m.Reference != "" {
		b.WriteString(bdi(m.Reference) + " · ")
	}
	b.WriteString(bdi(m.Shop))
	if m.Date != "" {
		b.WriteString(" · " + l.HTML("mail.quote.date", locale.Params{"Label": m.DateLabel, "When": m.Date}, nil))
	}
	b.WriteString("</p>\n")
	if len(m.Items) > 0 {
		b.WriteString("<ul>\n")
		for _, it := range m.Items {
			b.WriteString("<li>" + bdi(it) + "</li>\n")
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString(`<h3 style="font-size:15px">` + html.EscapeString(l.T("mail.quote.changes", nil)) + "</h3>\n")
	b.WriteString(`<table cellpadding="4" style="border-collapse:collapse">` + "\n")
	bold := func(on bool) string {
		if on {
			return ` style="font-weight:bold"`
		}
		return ""
	}
	for _, ln := range m.Lines {
		b.WriteString("<tr>")
		switch {
		case ln.Sentence != "":
			b.WriteString(`<td colspan="2"` + bold(ln.Emphasis) + ">" + bdi(ln.Sentence) + "</td>")
		case ln.From != "":
			b.WriteString(`<th style="text-align:start">` + bdi(ln.Label) + "</th><td" + bold(ln.Emphasis) + ">" +
				l.HTML("mail.quote.fromto", locale.Params{"From": ln.From, "To": ln.To}, map[string]string{"From": "<s>" + bdi(ln.From) + "</s>"}) + "</td>")
		default:
			b.WriteString(`<th style="text-align:start">` + bdi(ln.Label) + "</th><td" + bold(ln.Emphasis) + ">" + bdi(ln.To) + "</td>")
		}
		b.WriteString("</tr>\n")
	}
	if m.Amount != "" {
		b.WriteString(`<tr><th style="text-align:start">` + html.EscapeString(l.T("mail.quote.amount", nil)) +
			`</th><td style="font-weight:bold">` + bdi(m.Amount) + "</td></tr>\n")
	}
	b.WriteString("</table>\n")
	for _, w := range m.Why {
		b.WriteString("<p>" + l.HTML("mail.quote.why", locale.Params{"Why": w}, nil) + "</p>\n")
	}
	if m.MoneyArrives != "" {
		b.WriteString("<p>" + l.HTML("mail.quote.money_arrives", locale.Params{"When": m.MoneyArrives}, nil) + "</p>\n")
	}
	if m.Effective != "" {
		b.WriteString("<p>" + l.HTML("mail.quote.effective", locale.Params{"When": m.Effective}, nil) + "</p>\n")
	}
	if len(m.Consequences) > 0 {
		b.WriteString(`<h3 style="font-size:15px">` + html.EscapeString(l.T("mail.quote.consequences", nil)) + "</h3>\n<ul>\n")
		for _, c := range m.Consequences {
			b.WriteString("<li>" + bdi(c) + "</li>\n")
		}
		b.WriteString("</ul>\n")
	}
	if m.Deadline != "" {
		b.WriteString("<p>" + l.HTML("mail.quote.deadline", locale.Params{"When": m.Deadline}, nil) + "</p>\n")
	}
	return b.String()
}

// greeting opens a mail to c.
func greeting(l *locale.Localizer, c adapter.Contact) (plain, htm string) {
	if c.Name != "" {
		p := locale.Params{"Name": c.Name}
		return l.Text("mail.greeting.name", p), l.HTML("mail.greeting.name", p, nil)
	}
	return l.T("mail.greeting", nil), html.EscapeString(l.T("mail.greeting", nil))
}

// letter is a customer mail from shop in l's language: its sender's name
// "<shop> via Countersign" as the language writes it, each line of the
// plain part in the language's direction (Localizer.Lines) and the HTML
// part a document in the language and its direction.
func letter(l *locale.Localizer, to, shop, subject, plain, title, body string) mail.Message {
	m := mail.Message{To: to, Subject: subject, Body: l.Lines(plain), HTML: mail.Page(l.Tag().String(), string(l.Dir()), title, body)}
	if shop != "" {
		m.FromName = l.T("mail.from", locale.Params{"Shop": shop})
	}
	return m
}
