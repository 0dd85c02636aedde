package views

import "countersign/internal/locale"

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
