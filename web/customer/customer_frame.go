package customer

import (
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/adapter"
	"countersign/internal/locale"
	"countersign/views"
)

// This file holds whose name and whose clock a customer's page shows: the
// business the customer deals with (its brand, never the console's name,
// since a page or a code mail from a name the customer does not know looks
// like phishing), and times in the customer's own zone when their browser
// told us, else in the business's, always saying which.

// zoneCookie is where customer.js keeps the browser's time zone (an IANA
// name). It is a preference, not a proof: a wrong one only shifts how
// times are written, and the page names the zone it used.
const zoneCookie = "cs_zone"

// customerFrame is the business and the clock of one customer's page.
type customerFrame struct {
	// system is the system whose brand the page shows ("" for none).
	system string
	brand  adapter.Brand
	zone   *time.Location
	// own says zone is the customer's own, from their browser.
	own bool
	now time.Time
	// loc writes the page's texts, amounts and moments in the customer's
	// language (decided per request, customer_locale.go).
	loc *locale.Localizer
}

// frameFor is the frame of a page about system's request; an empty or
// unknown system gives the one connected system's brand, if there is
// only one, else none.
func (h *Handler) frameFor(c echo.Context, system string) customerFrame {
	name, brand := h.brandOf(system)
	return h.frameOf(c, name, brand)
}

// unbrandedFrame is the frame of a page that speaks for no one business
// (My requests over requests of more than one): Countersign's name, the
// customer's zone or UTC.
func (h *Handler) unbrandedFrame(c echo.Context) customerFrame {
	return h.frameOf(c, "", adapter.Brand{Zone: time.UTC})
}

func (h *Handler) frameOf(c echo.Context, system string, brand adapter.Brand) customerFrame {
	loc, _ := locale.From(c.Request().Context())
	f := customerFrame{now: h.Now(), system: system, brand: brand, loc: loc}
	f.zone = f.brand.Zone
	if ck, err := c.Cookie(zoneCookie); err == nil {
		if name, err := url.QueryUnescape(ck.Value); err == nil && name != "" && len(name) <= 64 {
			if loc, err := adapter.LoadZone(name); err == nil {
				f.zone, f.own = loc, true
			}
		}
	}
	return f
}

// brandOf is the system whose brand a page about system shows, and that
// brand (frameFor).
func (h *Handler) brandOf(system string) (string, adapter.Brand) {
	reg := h.cfg.Registry
	if reg == nil {
		return "", adapter.Brand{Zone: time.UTC}
	}
	if s, err := reg.System(system); err == nil {
		return s.Name(), adapter.BrandOf(s)
	}
	if all := reg.Systems(); len(all) == 1 {
		return all[0].Name(), adapter.BrandOf(all[0])
	}
	return "", adapter.Brand{Zone: time.UTC}
}

// at is a moment as a customer's page writes it, in the customer's
// language, in the page's zone and naming it: "Dec 2, 10:04 CET", "2 déc.,
// 10:04 CET", with the year when it is not this one (Localizer.When).
func (f customerFrame) at(t time.Time) string {
	return f.loc.When(t, f.zone, f.now)
}

// t is the catalogue message id in the customer's language.
func (f customerFrame) t(id string, p locale.Params) string { return f.loc.T(id, p) }

// money is an amount as the customer's language writes it, in the
// currency's own minor units (Localizer.Money).
func (f customerFrame) money(minor int64, currency string) string {
	return f.loc.Money(minor, currency)
}

// isolate keeps a value inside a sentence (a moment, an address) in its
// own direction, as <bdi> does in markup: between U+2068 FIRST STRONG
// ISOLATE and U+2069 POP DIRECTIONAL ISOLATE, so "Dec 2, 10:04 CET" in an
// Arabic sentence neither reorders nor is reordered.
func isolate(s string) string {
	if s == "" {
		return s
	}
	return "\u2068" + s + "\u2069"
}

// shop is the business's name in a sentence; "the business", in the
// customer's language, when there is none.
func (f customerFrame) shop() string {
	if f.brand.Name == "" {
		return f.t("pages.frame.business", nil)
	}
	return f.brand.Name
}

// page is the layout's model of a customer's page titled title.
func (h *Handler) page(c echo.Context, title string, f customerFrame) views.Page {
	p := h.Page(c, title)
	p.Customer = h.frameView(f)
	p.Customer.Languages = h.languageSwitch(c)
	return p
}

// frameView is the layout's customer frame of f.
func (h *Handler) frameView(f customerFrame) *views.CustomerFrame {
	v := &views.CustomerFrame{Brand: f.brand.Name, Zone: f.zone.String(), ZoneOwn: f.own}
	// The logo as the console serves it (logo.go), never the business's
	// own address; none until it has been fetched, which this never waits
	// for.
	if f.system != "" && h.logos.cached(f.system, f.brand.LogoURL) != nil {
		v.LogoURL = logoPath(f.system)
	}
	return v
}

// CustomerFrame is the customer frame of a customer's page about none of their
// requests in particular (the sign-in on the way to them, the account's
// home): the one connected business's, else Countersign's own.
func (h *Handler) CustomerFrame(c echo.Context) *views.CustomerFrame {
	return h.frameView(h.frameFor(c, ""))
}
