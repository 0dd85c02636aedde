package views

import (
	"context"
	"io"
	"strings"

	"github.com/a-h/templ"

	"countersign/internal/locale"
)

// Said is one catalogue sentence in the request's language, whose named
// parameters are rendered as elements inside it: data in its own
// direction (<bdi>, so a Latin name or id keeps its order in an Arabic
// sentence), a moment (<time>), a link. The sentence stays one message
// with named parameters, never pieces glued in code.
type Said struct {
	// ID is the message id; Count, when set, picks its plural form and is
	// also the parameter "Count".
	ID    string
	Count *int
	// Args are the named parameters.
	Args map[string]SaidArg
}

// SaidArg is one parameter of a Said: Text as it is shown, and what it is.
type SaidArg struct {
	Text string
	// Lang is the language Text is written in when it is not the page's
	// (a quote read in another language).
	Lang string
	// DateTime makes it a <time> with this machine-readable moment.
	DateTime string
	// Href makes it a link; Download marks the link as a file to keep.
	// A link's text is the page's own words, so it is not isolated.
	Href     string
	Download bool
	// Hidden makes it words for screen readers only (visually-hidden),
	// such as which row a "Remove" removes; Inner, when set, is those
	// words as a sentence of their own (Text is then unused).
	Hidden bool
	Inner  *Said
	// TestID is the element's data-testid.
	TestID string
}

// Say is the Said of id with args.
func Say(id string, args map[string]SaidArg) *Said { return &Said{ID: id, Args: args} }

// SayN is the plural Said of id for count with args.
func SayN(id string, count int, args map[string]SaidArg) *Said {
	return &Said{ID: id, Count: &count, Args: args}
}

// mark stands in for a parameter while the catalogue writes the sentence;
// NUL never occurs in a message.
const mark = "\x00"

// Render writes the sentence: its words escaped, each parameter as its
// element.
func (s *Said) Render(ctx context.Context, w io.Writer) error {
	if s == nil {
		return nil
	}
	marks := locale.Params{}
	for name := range s.Args {
		marks[name] = mark + name + mark
	}
	l, _ := locale.From(ctx)
	var text string
	if s.Count != nil {
		text = l.N(s.ID, *s.Count, marks)
	} else {
		text = l.T(s.ID, marks)
	}
	var b strings.Builder
	for i, part := range strings.Split(text, mark) {
		if i%2 == 0 {
			b.WriteString(templ.EscapeString(part))
			continue
		}
		arg, err := s.Args[part].html(ctx)
		if err != nil {
			return err
		}
		b.WriteString(arg)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (a SaidArg) html(ctx context.Context) (string, error) {
	if a.Hidden {
		var inner strings.Builder
		if a.Inner != nil {
			if err := a.Inner.Render(ctx, &inner); err != nil {
				return "", err
			}
		} else {
			inner.WriteString(templ.EscapeString(a.Text))
		}
		return `<span class="visually-hidden">` + inner.String() + `</span>`, nil
	}
	var b strings.Builder
	attr := func(name, v string) {
		if v != "" {
			b.WriteString(" " + name + `="` + templ.EscapeString(v) + `"`)
		}
	}
	text := templ.EscapeString(a.Text)
	switch {
	case a.Href != "":
		b.WriteString("<a")
		attr("href", string(templ.URL(a.Href)))
		if a.Download {
			b.WriteString(" download")
		}
		attr("data-testid", a.TestID)
		b.WriteString(">" + text + "</a>")
		return b.String(), nil
	case a.DateTime != "":
		b.WriteString("<bdi><time")
		attr("datetime", a.DateTime)
		attr("data-testid", a.TestID)
		b.WriteString(">" + text + "</time></bdi>")
		return b.String(), nil
	}
	b.WriteString("<bdi")
	attr("lang", a.Lang)
	attr("data-testid", a.TestID)
	b.WriteString(">" + text + "</bdi>")
	return b.String(), nil
}

// PasskeyScriptWords are the words static/passkey.js shows when a
// ceremony fails, in the request's language, as the data attributes of
// the form it runs on: the script itself holds no text.
func PasskeyScriptWords(ctx context.Context) templ.Attributes {
	return templ.Attributes{
		"data-passkey-refused":   locale.T(ctx, "receipt.passkey.script.refused", nil),
		"data-passkey-cancelled": locale.T(ctx, "receipt.passkey.script.cancelled", nil),
		"data-passkey-failed":    locale.T(ctx, "receipt.passkey.script.failed", nil),
	}
}
