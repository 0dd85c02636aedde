package locale

import (
	"context"
	"fmt"
	"html"
	"strconv"
	"strings"

	"golang.org/x/text/language"
)

// FromRead is the step of a mail's order that is the language the
// customer read in: the page a mail follows, or the one their last
// decision records.
const FromRead Source = "read"

// MailInputs are what a mail's language is decided from. A mail has no
// cookie nor Accept-Language of its own: it is written where the customer
// may not be (the console's mail loop), so it takes what the customer read
// in from the page it follows, or from their last decision.
type MailInputs struct {
	// Page is the language of the customer's page the mail follows (a
	// code or a link asked for there); zero when no page asked for it.
	// The business's word on that page (an assertion's loc) counts as
	// the business's; its switch or browser as what the customer reads.
	Page Choice
	// Contact is the business's word from its customer record
	// (adapter.Contact.Locale).
	Contact string
	// Read is the language the customer last decided in, as the audit
	// trail recorded it.
	Read string
	// Default is the system's default (adapter.Brand.Locale).
	Default string
}

// ForMail returns the language a mail to a customer is written in: the
// business's word (the assertion behind the page, then the customer
// record), then the language the customer reads (the page, then their
// last decision), then the system's default, then English. Like Decide, a
// value that names no supported language passes the choice on.
func ForMail(in MailInputs) Choice {
	if in.Page.Source == FromBusiness {
		if t, ok := one(in.Page.Tag.String()); ok {
			return choice(t, FromBusiness)
		}
	}
	if t, ok := one(in.Contact); ok {
		return choice(t, FromBusiness)
	}
	if in.Page.Source == FromSwitch || in.Page.Source == FromHeader {
		if t, ok := one(in.Page.Tag.String()); ok {
			return choice(t, FromRead)
		}
	}
	if t, ok := one(in.Read); ok {
		return choice(t, FromRead)
	}
	if t, ok := one(in.Default); ok {
		return choice(t, FromDefault)
	}
	return choice(language.English, FromFallback)
}

// PageOf is the Choice of the customer's page ctx carries
// (WithLocalizer), and the zero Choice when ctx carries none: a mail the
// console writes on its own follows no page.
func PageOf(ctx context.Context) Choice {
	if c, ok := ctx.Value(ctxKey{}).(carried); ok {
		return c.ch
	}
	return Choice{}
}

// Dir is the direction this localizer's language is written in.
func (l *Localizer) Dir() Dir { return Direction(l.tag) }

// HTML is the message id as escaped HTML, each parameter's value isolated
// in a <bdi> (a Latin name or an amount inside Arabic keeps its own
// direction and does not move the words around it), or, for a parameter
// named in raw, that HTML as given: the caller escapes what it puts there.
func (l *Localizer) HTML(id string, p Params, raw map[string]string) string {
	marked := make(Params, len(p))
	inner := make(map[string]string, len(p))
	i := 0
	for k, v := range p {
		// Private-use marks survive the template and the escaping, and no
		// catalogue text holds them.
		m := "\ue000" + strconv.Itoa(i) + "\ue001"
		i++
		marked[k] = m
		if r, ok := raw[k]; ok {
			inner[m] = r
		} else {
			inner[m] = "<bdi>" + html.EscapeString(fmt.Sprint(v)) + "</bdi>"
		}
	}
	var count any
	if c, ok := p["Count"]; ok {
		count = c
	}
	s, err := l.Localize(id, count, marked)
	if err != nil && s == "" {
		s = id
	}
	s = html.EscapeString(s)
	for m, h := range inner {
		s = strings.ReplaceAll(s, m, h)
	}
	return s
}

// Isolate is s as a plain text in this language carries the business's
// words: in a right-to-left language between FIRST STRONG ISOLATE and
// POP DIRECTIONAL ISOLATE, so a Latin name, amount or the two sides of
// an arrow keep their own direction and the sentence around them its
// own; s itself in a left-to-right language.
func (l *Localizer) Isolate(s string) string {
	if l.Dir() != RTL {
		return s
	}
	return "\u2068" + s + "\u2069"
}

// Text is the message id as a plain-text mail writes it: T (or N, when p
// has a "Count"), each other parameter's value isolated (Isolate).
func (l *Localizer) Text(id string, p Params) string {
	q := make(Params, len(p))
	for k, v := range p {
		q[k] = l.Isolate(fmt.Sprint(v))
	}
	if c, ok := p["Count"].(int); ok {
		return l.N(id, c, q)
	}
	return l.T(id, q)
}

// Lines is a plain text in this language with, in a right-to-left
// language, a RIGHT-TO-LEFT MARK at the start of each line: a mail reader
// lays each paragraph out by its first strong letter, and a line that
// starts with a Latin name or a bullet would otherwise run left to right.
func (l *Localizer) Lines(text string) string {
	if l.Dir() != RTL {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, s := range lines {
		if s != "" {
			lines[i] = "\u200f" + s
		}
	}
	return strings.Join(lines, "\n")
}
