package customer

import (
	"github.com/labstack/echo/v4"

	"countersign/internal/locale"
	"countersign/web/kit"
)

// withLocale gives every customer route the customer's language: it is
// decided once per request (internal/locale's order) and carried on the
// request's context, where templates read it (locale.T) and decisions
// record it. The pages are not translated yet; this is the foundation.
func (h *Handler) withLocale(routes []kit.Route) []kit.Route {
	cat := h.cfg.Catalogue
	if cat == nil {
		cat = locale.Installed()
	}
	for i := range routes {
		next := routes[i].Handler
		routes[i].Handler = func(c echo.Context) error {
			ch := customerLocale(c)
			if h.cfg.Pseudo {
				ch = locale.Choice{Tag: locale.Pseudo, Source: ch.Source, Dir: locale.LTR}
			}
			req := c.Request()
			c.SetRequest(req.WithContext(locale.WithLocalizer(req.Context(), cat.For(ch.Tag), ch)))
			return next(c)
		}
	}
	return routes
}

// customerLocale decides the customer's language from the request: the
// business's word that came with the customer's proof (an assertion's
// "loc"), the switch's cookie, Accept-Language, then English. The
// customer record's locale and the system's default
// (customer_brand.locale) are not yet carried to here.
func customerLocale(c echo.Context) locale.Choice {
	in := locale.Inputs{AcceptLanguage: c.Request().Header.Get("Accept-Language")}
	if p, ok := kit.CustomerOf(c); ok {
		in.Business = p.Locale
	}
	if ck, err := c.Cookie(locale.CookieName); err == nil {
		in.Cookie = ck.Value
	}
	return locale.Decide(in)
}

// decidedIn is the language a decision's page was read in, for its audit.
func decidedIn(c echo.Context) (tag, from string) {
	_, ch := locale.From(c.Request().Context())
	return ch.String(), string(ch.Source)
}
