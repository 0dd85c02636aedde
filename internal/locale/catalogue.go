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
	"sync/atomic"

	"github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

//go:embed catalog/*.json
var shipped embed.FS

// Pseudo is the pseudo-locale tests render pages in: English with every
// letter accented and every text lengthened, so text that does not come
// from a catalogue, or that overflows when a translation runs long, shows.
var Pseudo = language.MustParse("en-XA")

// Catalogue is the messages of every language offered to customers, with
// CLDR's plural rules: the shipped ones, and any an installation adds or
// overrides with files of its own (WithFiles). It is built once and read
// by every request.
type Catalogue struct {
	bundle *i18n.Bundle
	files  map[language.Tag]map[string]*i18n.Message
	// offered are the languages a customer may be given, English first;
	// matcher matches requests among them.
	offered []language.Tag
	matcher language.Matcher
	// localizers are each held language's, built once: a request, and
	// every console text, reads one rather than parsing its tags again.
	localizers map[language.Tag]*Localizer
}

// Option changes how a Catalogue is built.
type Option func(*options)

type options struct {
	pseudo bool
	files  fs.FS
}

// WithPseudo adds the pseudo-locale (Pseudo), generated from the English
// catalogue's customer-facing messages (the console's stay English, so on
// a customer's page they show as stray). Tests use it; a customer can
// never choose it.
func WithPseudo() Option { return func(o *options) { o.pseudo = true } }

// WithFiles lays an installation's catalogue files (the *.json at the root
// of fsys: the console's -locales-dir) over the shipped ones: a file in a
// new language adds it, a file in a shipped language overrides the texts
// it holds. Every file must pass Check; if one does not, the catalogue is
// refused with every problem (errors.As finds each Problem).
func WithFiles(fsys fs.FS) Option { return func(o *options) { o.files = fsys } }

// Load builds the catalogue from the embedded files catalog/*.json.
func Load(opts ...Option) (*Catalogue, error) {
	return LoadFS(shipped, "catalog", opts...)
}

// LoadFS builds a catalogue from the *.json files in dir of fsys, each
// named <tag>.json or <area>.<tag>.json. An English file is required: it
// is the fallback of every other.
func LoadFS(fsys fs.FS, dir string, opts ...Option) (*Catalogue, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	names, err := fs.Glob(fsys, path.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	c := &Catalogue{files: map[language.Tag]map[string]*i18n.Message{}}
	for _, name := range names {
		f, err := parseFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("locale: catalogue %s: %w", name, err)
		}
		c.add(f.Tag, f.Messages)
	}
	english, ok := c.files[language.English]
	if !ok {
		return nil, fmt.Errorf("locale: no English catalogue (en.json) in %s: every language falls back to it", dir)
	}
	if o.files != nil {
		r := c.Check(o.files)
		if err := r.Err(); err != nil {
			return nil, err
		}
		for _, f := range r.parsed {
			c.add(f.Tag, f.Messages)
		}
	}
	c.bundle = i18n.NewBundle(language.English)
	for tag, msgs := range c.files {
		if err := c.bundle.AddMessages(tag, sorted(msgs)...); err != nil {
			return nil, fmt.Errorf("locale: catalogue %s: %w", tag, err)
		}
		if tag != Pseudo {
			c.offered = append(c.offered, tag)
		}
	}
	sort.Slice(c.offered, func(i, j int) bool {
		a, b := c.offered[i], c.offered[j]
		if a == language.English || b == language.English {
			return a == language.English
		}
		return a.String() < b.String()
	})
	c.matcher = language.NewMatcher(c.offered)
	if o.pseudo {
		msgs := make([]*i18n.Message, 0, len(english))
		for _, m := range sorted(english) {
			if !EnglishOnly(m.ID) {
				msgs = append(msgs, pseudoMessage(m))
			}
		}
		if err := c.bundle.AddMessages(Pseudo, msgs...); err != nil {
			return nil, err
		}
		c.add(Pseudo, msgs)
	}
	c.localizers = make(map[language.Tag]*Localizer, len(c.files))
	for tag := range c.files {
		c.localizers[tag] = c.newLocalizer(tag)
	}
	return c, nil
}

func parseFile(fsys fs.FS, name string) (*i18n.MessageFile, error) {
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	return i18n.ParseMessageFileBytes(raw, name, map[string]i18n.UnmarshalFunc{"json": json.Unmarshal})
}

// add lays msgs over what tag holds: a later file's message replaces an
// earlier one's of the same id.
func (c *Catalogue) add(tag language.Tag, msgs []*i18n.Message) {
	if c.files[tag] == nil {
		c.files[tag] = map[string]*i18n.Message{}
	}
	for _, m := range msgs {
		c.files[tag][m.ID] = m
	}
}

func sorted(msgs map[string]*i18n.Message) []*i18n.Message {
	out := make([]*i18n.Message, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
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

// Offered are the languages a customer may be given, English first: every
// language the catalogue holds but the pseudo-locale. A language an
// installation adds is here only because Check found it complete.
func (c *Catalogue) Offered() []language.Tag {
	return append([]language.Tag(nil), c.offered...)
}

// Messages are the messages a language's files hold, by id, with an
// installation's overrides (no fallback), for the checks that compare
// catalogues.
func (c *Catalogue) Messages(tag language.Tag) []*i18n.Message { return sorted(c.files[tag]) }

// For returns the Localizer of one request's language. A message missing
// from that language's file is taken from English. A language the
// catalogue holds gets the one Load built; it is read only, so every
// request shares it.
func (c *Catalogue) For(tag language.Tag) *Localizer {
	if l, ok := c.localizers[tag]; ok {
		return l
	}
	return c.newLocalizer(tag)
}

func (c *Catalogue) newLocalizer(tag language.Tag) *Localizer {
	return &Localizer{tag: tag, l: i18n.NewLocalizer(c.bundle, tag.String(), language.English.String())}
}

// Params are a message's named parameters: {"Count": 3, "Name": "Ada"}.
type Params map[string]any

// Localizer gives one language's texts by message id.
type Localizer struct {
	tag language.Tag
	l   *i18n.Localizer
	// format, when not Und, is the regional tag amounts are written in
	// (FormattingAs).
	format language.Tag
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

// Decided says whether ctx carries a language a request decided: a
// customer's route's, whose pages (even its error pages) are written in
// the customer's language, not the console's English.
func Decided(ctx context.Context) bool {
	_, ok := ctx.Value(ctxKey{}).(carried)
	return ok
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

// Console is a text of the staff console (console.*, EnglishOnly): English
// from the installed catalogue, with the installation's overrides, whatever
// language a request carries, since the console is English only.
func Console(id string, p Params) string { return english().T(id, p) }

// ConsoleN is the plural console text id for count, by English's rule.
func ConsoleN(id string, count int, p Params) string { return english().N(id, count, p) }

var (
	shippedOnce sync.Once
	shippedCat  *Catalogue
	installed   atomic.Pointer[Catalogue]
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

// Install makes c the process's catalogue: Decide matches among its
// languages, Supported returns its Offered, and pages rendered without a
// request's language (the staff console) read its English, overrides
// included. The console calls it once at start, before serving; nil
// returns to Shipped.
func Install(c *Catalogue) {
	installed.Store(c)
}

// Installed is the catalogue Install made the process's, Shipped until then.
func Installed() *Catalogue {
	if c := installed.Load(); c != nil {
		return c
	}
	return Shipped()
}

func english() *Localizer { return Installed().For(language.English) }
