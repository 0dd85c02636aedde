package customer

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/adapter"
	"countersign/internal/confirmation"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// This file decides which language a customer reads (internal/locale's
// order: the business's word, the switch's cookie, Accept-Language, the
// system's default, English) and puts it on the request's context, where
// templates read it and decisions record it.
//
// The business's word is an assertion's "loc", else the customer record's
// locale, read from the system's adapter (adapter.ContactDirectory) once
// per session and system: when a link's proof is made (startCustomerSession)
// or, for a signed-in account, the first time a page of that system needs
// it. The answer, a locale or none, is kept in the session under
// recordLocaleKey, so later pages cost no round-trip to the business. A
// link's page before any proof keeps its customer's in the process
// instead (linkLocales), so that no visitor's fetch stores a session.

// recordLocaleKey is the session value keeping a system's customer
// record's locale ("" when the record has none).
func recordLocaleKey(system string) string { return "record_locale:" + system }

// recordReadTimeout bounds the read of a customer record's locale: a slow
// business system delays the proof or the page by this much at most, and
// the customer then reads the next step's language.
const recordReadTimeout = 3 * time.Second

// withLocale gives every customer route the customer's language, decided
// before the handler runs with what is known then: the proof's word and
// record (as kept in the session) and the default of the proof's system,
// or of the one connected system. Handlers that load a request call
// localise again with its system. A refusal a handler returns is said in
// that language (sayRefusal): no English of another package's reaches
// the customer's error page.
func (h *Handler) withLocale(routes []kit.Route) []kit.Route {
	for i := range routes {
		next := routes[i].Handler
		routes[i].Handler = func(c echo.Context) error {
			h.DecideLocale(c)
			return h.sayRefusal(c, next(c))
		}
	}
	return routes
}

// DecideLocale decides the customer's language for the error page of a
// customer's route refused before its handler ran (a form's expired CSRF
// token, a database that failed as the session loaded), as withLocale
// would have: the error page is written in it too.
func (h *Handler) DecideLocale(c echo.Context) {
	system := ""
	if p, ok := kit.CustomerOf(c); ok {
		system = p.System
	}
	h.decideLocale(c, system, "", false)
}

// localise re-decides the customer's language once the request's system
// is known, and replaces the context's Localizer and Choice: the
// business's word (with the customer record, read once per session), the
// switch, the header, then that system's default. Every handler that
// loads a request calls it before rendering or deciding.
func (h *Handler) localise(c echo.Context, system string) {
	h.decideLocale(c, system, "", true)
}

// localiseLink is localise for a link's page, opened before its holder
// proved anything: the business's word is that of the link's customer
// (customerRef), whose request the page shows to whoever holds the link
// anyway. A browser that proved it is a customer reads its own.
func (h *Handler) localiseLink(c echo.Context, o confirmation.Opened) {
	h.decideLocale(c, o.System, o.CustomerRef, true)
}

// decideLocale decides for a page about system's request; read allows
// reading the customer record when the session does not hold it yet;
// linkRef is the customer of the link a visitor without proof opened.
func (h *Handler) decideLocale(c echo.Context, system, linkRef string, read bool) {
	name, brand := h.brandOf(system)
	in := locale.Inputs{AcceptLanguage: c.Request().Header.Get("Accept-Language"), Default: brand.Locale,
		Business: h.businessWord(c, name, linkRef, read)}
	if ck, err := c.Cookie(locale.CookieName); err == nil {
		in.Cookie = ck.Value
	}
	ch := locale.Decide(in)
	if h.cfg.Pseudo {
		ch = locale.Choice{Tag: locale.Pseudo, Source: ch.Source, Dir: locale.LTR}
	}
	req := c.Request()
	c.SetRequest(req.WithContext(locale.WithLocalizer(req.Context(), h.catalogue().For(ch.Tag).FormattingAs(ch.Regional), ch)))
}

// catalogue is the messages the pages are written from.
func (h *Handler) catalogue() *locale.Catalogue {
	if h.cfg.Catalogue != nil {
		return h.cfg.Catalogue
	}
	return locale.Installed()
}

// businessWord is the business's word for this browser's customer on a
// page of system: the assertion's "loc" when the console ships it, else
// the customer record's locale. A visitor who proved nothing reads the
// record of the customer whose link they opened (linkRef,
// linkRecordLocale); without a link, none.
func (h *Handler) businessWord(c echo.Context, system, linkRef string, read bool) string {
	p, ok := kit.CustomerOf(c)
	if !ok {
		return h.linkRecordLocale(c, system, linkRef, read)
	}
	if _, ok := locale.Match(p.Locale); ok {
		return p.Locale
	}
	// A link's proof speaks for its own system's customer record only.
	if system == "" || (!p.Spans() && p.System != system) {
		return ""
	}
	sess := kit.Session(c)
	if sess == nil {
		return ""
	}
	if v, kept := sess.Values[recordLocaleKey(system)].(string); kept || !read {
		return v
	}
	if !h.keepRecordLocale(c.Request().Context(), sess.Values, p.CustomerRef, system) {
		return ""
	}
	kit.MarkDirty(sess)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		h.Log.Warn("keep the customer record's locale", "system", system, "error", err)
	}
	v, _ := sess.Values[recordLocaleKey(system)].(string)
	return v
}

// linkRecordLocale is the record's locale of a link's customer for a
// visitor who proved nothing yet, kept in the process per system and
// customer (linkLocales): fetching a link's page again, with or without
// cookies, reads the business system no more and stores no session.
func (h *Handler) linkRecordLocale(c echo.Context, system, ref string, read bool) string {
	if system == "" || ref == "" {
		return ""
	}
	key := recordLocaleKey(system) + ":" + ref
	if v, kept := h.linkLocales.get(key); kept || !read {
		return v
	}
	values := map[any]any{}
	if !h.keepRecordLocale(c.Request().Context(), values, ref, system) {
		// A business system that does not answer is not asked again on
		// every fetch of the page: it reads the browser's language a while.
		h.linkLocales.put(key, "", linkLocaleRetry)
		return ""
	}
	v, _ := values[recordLocaleKey(system)].(string)
	h.linkLocales.put(key, v, linkLocaleFor)
	return v
}

// keepRecordLocale reads the customer's record in system through its
// adapter and keeps its locale in values; it reports whether there is an
// answer to keep. A system that keeps no contact, or a customer it does
// not know, is an answer (none); a failure to reach it is not, and the
// next page asks again.
func (h *Handler) keepRecordLocale(ctx context.Context, values map[any]any, customerRef, system string) bool {
	if h.cfg.Registry == nil {
		return false
	}
	sys, err := h.cfg.Registry.System(system)
	if err != nil {
		return false
	}
	dir, ok := sys.(adapter.ContactDirectory)
	if !ok {
		values[recordLocaleKey(system)] = ""
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, recordReadTimeout)
	defer cancel()
	ct, err := dir.Contact(ctx, adapter.Principal{CustomerRef: customerRef})
	var ae *adapter.Error
	if err != nil && !errors.As(err, &ae) {
		h.Log.Warn("read the customer record's locale", "system", system, "error", err)
		return false
	}
	values[recordLocaleKey(system)] = adapter.RecordLocale(ct.Locale)
	return true
}

// keepProofLocale reads, as a link's proof is made, the customer record's
// locale into the new session's values, unless the assertion's word
// already decides.
func (h *Handler) keepProofLocale(ctx context.Context, values map[any]any, p confirmation.Proved) {
	if _, ok := locale.Match(p.Locale); ok || p.System == "" {
		return
	}
	h.keepRecordLocale(ctx, values, p.CustomerRef, p.System)
}

// decidedIn is the language a decision's page was read in, for its audit.
func decidedIn(c echo.Context) (tag, from string) {
	_, ch := locale.From(c.Request().Context())
	return ch.String(), string(ch.Source)
}

// localeCookieAge is how long the switch's choice is kept: a year, as
// GOV.UK keeps its language cookie.
const localeCookieAge = 365 * 24 * time.Hour

// handleLocaleSwitch answers POST /locale, the visible switch: it keeps
// the language chosen (one the pages ship in; anything else changes
// nothing) in the countersign_locale cookie and goes back to next, a path
// on this site (else the home page), so the customer stays where they
// were. Its CSRF token is checked like every form's.
func (h *Handler) handleLocaleSwitch(c echo.Context) error {
	if tag, ok := locale.Match(c.FormValue("locale")); ok {
		c.SetCookie(&http.Cookie{Name: locale.CookieName, Value: tag.String(), Path: "/",
			MaxAge: int(localeCookieAge / time.Second), Expires: h.Now().Add(localeCookieAge),
			HttpOnly: true, Secure: c.Scheme() == "https", SameSite: http.SameSiteLaxMode})
	}
	next := c.FormValue("next")
	if !kit.LocalPath(next) {
		next = "/"
	}
	return kit.SeeOther(c, next)
}

// languageSwitch is the switch of this customer's page: every shipped
// language in its own words (its own catalogue's choice.language.name),
// the page's marked, coming back to this page. In the pseudo-locale the
// names are pseudo-text too, so that a page's test finds no stray.
func (h *Handler) languageSwitch(c echo.Context) *views.LanguageSwitch {
	csrf, err := h.CSRFToken(c)
	if err != nil {
		h.Log.Warn("the language switch's token", "error", err)
		return nil
	}
	l, ch := locale.From(c.Request().Context())
	cat := h.catalogue()
	v := &views.LanguageSwitch{Label: l.T("language.switch.label", nil), Next: hereForSwitch(c), CSRF: csrf}
	for _, t := range locale.Supported() {
		name := cat.For(t).T("choice.language.name", nil)
		if h.cfg.Pseudo {
			name = locale.PseudoText(name)
		}
		v.Languages = append(v.Languages, views.LanguageOption{Tag: t.String(), Name: name, Current: t == ch.Tag})
	}
	return v
}

// hereForSwitch is the page the switch comes back to: this GET's path and
// query; for a page shown in answer to a form (a wrong code, a refused
// decision), the page the form was on, which shows the same state again
// from the session (a code sent stays sent).
func hereForSwitch(c echo.Context) string {
	u := c.Request().URL
	if c.Request().Method != http.MethodGet {
		return formPage(u.Path)
	}
	q := u.Query()
	// An assertion is spent once; coming back with it would refuse it.
	q.Del("assertion")
	here := u.Path
	if len(q) > 0 {
		here += "?" + q.Encode()
	}
	if !kit.LocalPath(here) {
		return "/"
	}
	return here
}

// formPage is the page a customer's form posted from: the link's page for
// its code, mail and passkey forms, the mail link's page, the request's
// page for its decisions; the home page for any other.
func formPage(path string) string {
	parts := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if len(parts) >= 2 && parts[1] != "" && (parts[0] == "c" || parts[0] == "m" || parts[0] == "requests") {
		if here := "/" + parts[0] + "/" + parts[1]; kit.LocalPath(here) {
			return here
		}
	}
	return "/"
}

// decisionSystem is the system of the request a decision is on, for its
// language: a link's proof names it; for a signed-in account, whose proof
// spans systems, the request is read for it (its system never changes, so
// this read decides nothing the decision's own load could contradict).
func (h *Handler) decisionSystem(c echo.Context, p confirmation.Proved) string {
	if !p.Spans() {
		return p.System
	}
	inv, err := h.cfg.Control.Invocation(c.Request().Context(), c.Param("id"))
	if err != nil {
		return ""
	}
	return inv.System
}
