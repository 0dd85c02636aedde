package views

import (
	"context"

	"countersign/internal/locale"
)

// documentTitle is the document's title: the page's, then whose page it
// is; a customer's page writes it in the customer's language, the
// console's is pageTitle.
func documentTitle(ctx context.Context, p Page) string {
	if p.Customer == nil {
		return pageTitle(p)
	}
	brand := p.Customer.Brand
	if brand == "" {
		brand = "Countersign"
	}
	return locale.T(ctx, "rtl.layout.title", locale.Params{"Page": p.Title, "Brand": brand})
}

// pageLang is the document's language: the customer's on a customer's
// page (decided per request, internal/locale), English on the console's.
func pageLang(ctx context.Context, p Page) string {
	if p.Customer == nil {
		return "en"
	}
	_, ch := locale.From(ctx)
	return ch.String()
}

// pageDir is a customer's page's text direction, "rtl" for Arabic: the
// page mirrors by itself, app.css being written in logical properties.
func pageDir(ctx context.Context) string {
	_, ch := locale.From(ctx)
	return string(ch.Dir)
}
