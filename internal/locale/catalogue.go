package locale

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"sync"

	"github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

//go:embed catalog/*.json
var shipped embed.FS

// Pseudo is the pseudo-locale tests render pages in: English with every
// letter accented and every text lengthened, so text that does not come
// from a catalogue, or that overflows when a translation runs long, shows.
var Pseudo = language.MustParse("en-XA")

// Catalogue is the shipped messages of every supported language, with
// CLDR's plural rules. It is built once and read by every request.
type Catalogue struct {
	bundle *i18n.Bundle
	files  map[language.Tag][]*i18n.Message
}

// Option changes how a Catalogue is built.
type Option func(*options)

type options struct{ pseudo bool }

// WithPseudo adds the pseudo-locale (Pseudo), generated from the English
// catalogue. Tests use it; a customer can never choose it.
func WithPseudo() Option { return func(o *options) { o.pseudo = true } }

// Load builds the catalogue from the embedded files catalog/<tag>.json.
func Load(opts ...Option) (*Catalogue, error) {
	return LoadFS(shipped, "catalog", opts...)
}

// LoadFS builds a catalogue from the <tag>.json files in dir of fsys. An
// English file is required: it is the fallback of every other.
func LoadFS(fsys fs.FS, dir string, opts ...Option) (*Catalogue, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	b := i18n.NewBundle(language.English)
	b.RegisterUnmarshalFunc("json", json.Unmarshal)
	names, err := fs.Glob(fsys, path.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	c := &Catalogue{bundle: b, files: map[language.Tag][]*i18n.Message{}}
	for _, name := range names {
		f, err := b.LoadMessageFileFS(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("locale: catalogue %s: %w", name, err)
		}
		c.files[f.Tag] = append(c.files[f.Tag], f.Messages...)
	}
	english, ok := c.files[language.English]
	if !ok {
		return nil, fmt.Errorf("locale: no English catalogue (en.json) in %s: every language falls back to it", dir)
	}
	if o.pseudo {
		msgs := make([]*i18n.Message, 0, len(english))
		for _, m := range english {
			msgs = append(msgs, pseudoMessage(m))
		}
		if err := b.AddMessages(Pseudo, msgs...); err != nil {
			return nil, err
		}
		c.files[Pseudo] = msgs
	}
	return c, nil
}

// Tags are the languages the catalogue holds, in a stable order.
func (c *Catalogue) Tags() []language.Tag {
	tags := make([]language.Tag, 0, len(c.files))
	for t := range c.files {
		tags = append(tags, t)
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].String() < tags[j].String() })
	return tags
}

// Messages are the messages a language's file holds, as written (no
// fallback), for the checks that compare catalogues.
func (c *Catalogue) Messages(tag language.Tag) []*i18n.Message { return c.files[tag] }

// For returns the Localizer of one request's language. A message missing
// from that language's file is taken from English.
func (c *Catalogue) For(tag language.Tag) *Localizer {
	return &Localizer{tag: tag, l: i18n.NewLocalizer(c.bundle, tag.String(), language.English.String())}
}

// Params are a message's named parameters: {"Count": 3, "Name": "Ada"}.
type Params map[string]any

// Localizer gives one language's texts by message id.
type Localizer struct {
	tag language.Tag
	l   *i18n.Localizer
}

// Tag is the language this localizer writes.
func (l *Localizer) Tag() language.Tag { return l.tag }

// T is the message id's text with its named parameters. A message the
// catalogues do not hold shows its id, never an English sentence built in
// code; the catalogue tests keep that from shipping.
func (l *Localizer) T(id string, p Params) string {
	s, err := l.Localize(id, nil, p)
	if err != nil && s == "" {
		return id
	}
	return s
}

// N is the plural message id's text for count, by the language's CLDR
// plural rule; the count is also the parameter "Count".
func (l *Localizer) N(id string, count int, p Params) string {
	s, err := l.Localize(id, count, p)
	if err != nil && s == "" {
		return id
	}
	return s
}

// Localize is T and N with the error: an unknown id, a message this
// language's file lacks (the text is then English's), a missing plural
// form or a template that does not execute.
func (l *Localizer) Localize(id string, count any, p Params) (string, error) {
	data := map[string]any{}
	for k, v := range p {
		data[k] = v
	}
	if count != nil {
		data["Count"] = count
	}
	return l.l.Localize(&i18n.LocalizeConfig{MessageID: id, TemplateData: data, PluralCount: count})
}

type ctxKey struct{}

// WithLocalizer returns ctx carrying the request's Localizer and Choice,
// which templates read with From.
func WithLocalizer(ctx context.Context, l *Localizer, ch Choice) context.Context {
	return context.WithValue(ctx, ctxKey{}, carried{l, ch})
}

type carried struct {
	l  *Localizer
	ch Choice
}

// From returns the request's Localizer and Choice. Without one (a page
// rendered outside a request that decided), it is the shipped English, so
// a page still shows text rather than failing.
func From(ctx context.Context) (*Localizer, Choice) {
	if c, ok := ctx.Value(ctxKey{}).(carried); ok {
		return c.l, c.ch
	}
	return english(), Choice{Tag: language.English, Source: FromFallback, Dir: LTR}
}

// T is the text of message id in the request's language, for templates:
// { locale.T(ctx, "language.switch.label", nil) }.
func T(ctx context.Context, id string, p Params) string {
	l, _ := From(ctx)
	return l.T(id, p)
}

// N is the plural text of message id for count in the request's language.
func N(ctx context.Context, id string, count int, p Params) string {
	l, _ := From(ctx)
	return l.N(id, count, p)
}

var (
	shippedOnce sync.Once
	shippedCat  *Catalogue
)

// Shipped is the embedded catalogue, loaded once for the process. Its
// files are part of the binary and checked by this package's tests, so a
// failure to load them is a broken build, not a condition to handle.
func Shipped() *Catalogue {
	shippedOnce.Do(func() {
		c, err := Load()
		if err != nil {
			panic("locale: the embedded catalogue does not load: " + err.Error())
		}
		shippedCat = c
	})
	return shippedCat
}

func english() *Localizer { return Shipped().For(language.English) }
