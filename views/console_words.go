package views

import (
	"context"
	"io"
	"strings"

	"github.com/a-h/templ"

	"countersign/internal/locale"
)

// consoleText is one of the console's texts (console.*): English from the
// catalogue, with the installation's overrides (-locales-dir), whatever
// language the request carries (locale.Console).
func consoleText(id string) string { return locale.Console(id, nil) }

// consoleWith is a console text with its named parameters.
func consoleWith(id string, p map[string]any) string { return locale.Console(id, p) }

// pageTitle is the document's title: the page's, then whose page it is.
func pageTitle(p Page) string {
	if p.Customer != nil && p.Customer.Brand != "" {
		return p.Title + " · " + p.Customer.Brand
	}
	return locale.Console("console.frame.title", locale.Params{"Page": p.Title})
}

// consoleN is the plural console text id for count; the count as shown
// (with thousands separators) is the parameter "N".
func consoleN(id string, count int, p map[string]any) string {
	q := locale.Params{"N": thousandsView(int64(count))}
	for k, v := range p {
		q[k] = v
	}
	return locale.ConsoleN(id, count, q)
}

// consoleSaid is a console sentence whose named parameters are elements
// (a <time>, a link, a name in <strong>): the sentence stays one message,
// each parameter written where the message puts it.
func consoleSaid(id string, parts map[string]templ.Component) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		marks := locale.Params{}
		for name := range parts {
			marks[name] = mark + name + mark
		}
		text := locale.Console(id, marks)
		for i, part := range strings.Split(text, mark) {
			if i%2 == 0 {
				if _, err := io.WriteString(w, templ.EscapeString(part)); err != nil {
					return err
				}
				continue
			}
			if err := parts[part].Render(ctx, w); err != nil {
				return err
			}
		}
		return nil
	})
}

// consoleString is a parameter of consoleSaid that is text, escaped.
func consoleString(s string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, templ.EscapeString(s))
		return err
	})
}

// queueWaiting says how many cards wait, and whether filters narrow them.
func queueWaiting(v QueueView) string {
	ids := [2]string{"console.queue.waiting.count", "console.queue.waiting.count_filtered"}
	switch {
	case v.Waiting == 0:
		ids = [2]string{"console.queue.waiting.none", "console.queue.waiting.none_filtered"}
	case v.Capped:
		ids = [2]string{"console.queue.waiting.more", "console.queue.waiting.more_filtered"}
	}
	var p map[string]any
	if v.Capped {
		// The cap is written as the list counts it: "More than 1000".
		p = map[string]any{"N": itoaView(v.Waiting)}
	}
	if v.Filtered {
		return consoleN(ids[1], v.Waiting, p)
	}
	return consoleN(ids[0], v.Waiting, p)
}

// queueAges are the queue filter's choices of how long a card has waited:
// the value sent and its words.
func queueAges() [][2]string {
	return [][2]string{
		{"", consoleText("console.queue.filter.age_any")},
		{"15m", consoleText("console.queue.filter.age_15m")},
		{"1h", consoleText("console.queue.filter.age_1h")},
		{"4h", consoleText("console.queue.filter.age_4h")},
		{"24h", consoleText("console.queue.filter.age_24h")},
	}
}

// emphasis are the only markup a console text may carry: the strong
// emphasis of a word inside its sentence ("stops <strong>further</strong>
// dispatch"), so the sentence stays one message. An apostrophe needs no
// escaping in an element's text, so it is written as itself: the long
// explanations of the metrics page stay within its size budget.
var emphasis = strings.NewReplacer("&lt;strong&gt;", "<strong>", "&lt;/strong&gt;", "</strong>", "&#39;", "'")

// consoleMarked is a console text whose <strong> emphasis is kept;
// everything else in it is escaped.
func consoleMarked(id string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, emphasis.Replace(templ.EscapeString(locale.Console(id, nil))))
		return err
	})
}
