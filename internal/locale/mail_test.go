package locale_test

import (
	"context"
	"testing"

	"golang.org/x/text/language"

	"countersign/internal/locale"
)

// TestForMailFollowsTheOrder: a mail's language is the business's word
// (the assertion behind the page, then the customer record), then what
// the customer reads (the page's switch or browser, then their last
// decision), then the system's default, then English; what names no
// shipped language passes the choice on.
func TestForMailFollowsTheOrder(t *testing.T) {
	page := func(tag string, src locale.Source) locale.Choice {
		return locale.Choice{Tag: language.MustParse(tag), Source: src}
	}
	all := locale.MailInputs{Page: page("es", locale.FromBusiness), Contact: "fr-CA", Read: "de", Default: "ar"}
	for _, tc := range []struct {
		name string
		in   locale.MailInputs
		tag  string
		src  locale.Source
	}{
		{"the assertion behind the page", all, "es", locale.FromBusiness},
		{"the customer record", locale.MailInputs{Page: page("es", locale.FromSwitch), Contact: "fr-CA", Read: "de", Default: "ar"}, "fr", locale.FromBusiness},
		{"the page's switch", locale.MailInputs{Page: page("es", locale.FromSwitch), Read: "de", Default: "ar"}, "es", locale.FromRead},
		{"the page's browser", locale.MailInputs{Page: page("es", locale.FromHeader), Read: "de", Default: "ar"}, "es", locale.FromRead},
		{"the last decision", locale.MailInputs{Page: page("en", locale.FromDefault), Read: "de", Default: "ar"}, "de", locale.FromRead},
		{"the system's default", locale.MailInputs{Contact: "pt-BR", Read: "x-not a tag", Default: "ar"}, "ar", locale.FromDefault},
		{"English", locale.MailInputs{Default: "ja"}, "en", locale.FromFallback},
	} {
		got := locale.ForMail(tc.in)
		if got.Tag.String() != tc.tag || got.Source != tc.src {
			t.Errorf("%s: %s from %s; want %s from %s", tc.name, got.Tag, got.Source, tc.tag, tc.src)
		}
	}
	if got := locale.ForMail(locale.MailInputs{Default: "ar"}); got.Dir != locale.RTL {
		t.Errorf("an Arabic mail runs %s", got.Dir)
	}
	ch := locale.Decide(locale.Inputs{Cookie: "fr"})
	ctx := locale.WithLocalizer(context.Background(), locale.Shipped().For(ch.Tag), ch)
	if got := locale.PageOf(ctx); got != ch {
		t.Errorf("PageOf: %+v; want %+v", got, ch)
	}
	if got := locale.PageOf(context.Background()); got != (locale.Choice{}) {
		t.Errorf("PageOf without a page: %+v", got)
	}
}

// TestHTMLIsolatesEveryParameter: a message as HTML is escaped, each
// parameter's value in a <bdi>, and a raw parameter as given.
func TestHTMLIsolatesEveryParameter(t *testing.T) {
	ar := locale.Shipped().For(language.Arabic)
	got := ar.HTML("mail.quote.fromto", locale.Params{"From": "<b>A&B</b>", "To": "$42.10"}, map[string]string{"From": "<s>x</s>"})
	if want := "<s>x</s> ← <bdi>$42.10</bdi>"; got != want {
		t.Errorf("fromto: %q; want %q", got, want)
	}
	got = locale.Shipped().For(language.English).HTML("mail.greeting.name", locale.Params{"Name": "<Jo> & \"Ann\""}, nil)
	if want := "Hello <bdi>&lt;Jo&gt; &amp; &#34;Ann&#34;</bdi>,"; got != want {
		t.Errorf("greeting: %q; want %q", got, want)
	}
	if got := ar.HTML("mail.code.lifetime", locale.Params{"Count": 2}, nil); got != "الرمز صالح لمدة دقيقتين. إذا لم تطلبه، فتجاهل هذه الرسالة: لن يتغيّر شيء دون الرمز." {
		t.Errorf("plural: %q", got)
	}
}

// TestPlainTextIsolatesInRightToLeft: in Arabic a plain text's parameters
// are isolated and its lines open right to left; in French both are left
// as they are.
func TestPlainTextIsolatesInRightToLeft(t *testing.T) {
	ar, fr := locale.Shipped().For(language.Arabic), locale.Shipped().For(language.French)
	if got := ar.Text("mail.quote.fromto", locale.Params{"From": "A", "To": "B"}); got != "\u2068A\u2069 ← \u2068B\u2069" {
		t.Errorf("Arabic: %q", got)
	}
	if got := ar.Text("mail.code.lifetime", locale.Params{"Count": 11}); got != "الرمز صالح لمدة 11 دقيقة. إذا لم تطلبه، فتجاهل هذه الرسالة: لن يتغيّر شيء دون الرمز." {
		t.Errorf("Arabic, counted: %q", got)
	}
	if got := fr.Text("mail.quote.fromto", locale.Params{"From": "A", "To": "B"}); got != "A → B" {
		t.Errorf("French: %q", got)
	}
	if got := ar.Lines("a\n\nb\n"); got != "\u200fa\n\n\u200fb\n" {
		t.Errorf("Arabic lines: %q", got)
	}
	if got := fr.Lines("a\nb"); got != "a\nb" {
		t.Errorf("French lines: %q", got)
	}
}
