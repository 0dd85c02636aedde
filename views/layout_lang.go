package views

import (
	"context"

	"countersign/internal/locale"
)

// inCustomersLanguage says whether the page is written in a customer's
// language: a customer's page, or any page of a customer's route (its
// error pages, which have no customer frame) whose request decided one.
func inCustomersLanguage(ctx context.Context, p Page) bool {
	return p.Customer != nil || locale.Decided(ctx)
}

// documentTitle is the document's title: the page's, then whose page it
// is; a page in a customer's language writes it in that language, the
// console's is pageTitle.
func documentTitle(ctx context.Context, p Page) string {
	if !inCustomersLanguage(ctx, p) {
		return pageTitle(p)
	}
	brand := "Countersign"
	if p.Customer != nil && p.Customer.Brand != "" {
		brand = p.Customer.Brand
	}
	return locale.T(ctx, "rtl.layout.title", locale.Params{"Page": p.Title, "Brand": brand})
}

// pageLang is the document's language: the customer's on a page in the
// customer's language (decided per request, internal/locale), English on
// the console's.
func pageLang(ctx context.Context, p Page) string {
	if !inCustomersLanguage(ctx, p) {
		return "en"
	}
	_, ch := locale.From(ctx)
	return ch.String()
}

// pageDir is the text direction of a page in a customer's language, "rtl" for Arabic: the
// page mirrors by itself, app.css being written in logical properties.
func pageDir(ctx context.Context) string {
	_, ch := locale.From(ctx)
	return string(ch.Dir)
}
