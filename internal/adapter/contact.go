package adapter

import (
	"context"

	"golang.org/x/text/language"
)

// Contact is where a business system reaches its customer out of band: the
// address on file in the system itself, never one the assistant supplied.
type Contact struct {
	// Email is the customer's e-mail address on file.
	Email string
	// Name is how the system addresses the customer ("Jordan Lee").
	Name string
	// Locale, optional, is the customer's language as the business keeps
	// it (a BCP 47 tag: "fr", "de-AT"): the business's word, which comes
	// before the customer's switch and browser (internal/locale.Decide).
	Locale string
}

// ContactDirectory is implemented by a system that can say where its
// customer is reached, so the console can send a one-time code there
// before the customer confirms. A principal the system does not know fails
// with an *Error (code "unknown_customer"); a system without the interface
// cannot offer codes, and its customers prove themselves another way.
type ContactDirectory interface {
	Contact(ctx context.Context, p Principal) (Contact, error)
}

// RecordLocale is a customer record's language in its canonical form
// ("fr-CA" for "fr-ca"), or "" when the record holds no BCP 47 tag: a
// damaged record must not stop the customer's codes, and the choice of
// language then goes on to the customer's switch and browser.
func RecordLocale(s string) string {
	if s == "" || len(s) > 64 {
		return ""
	}
	tag, err := language.Parse(s)
	if err != nil {
		return ""
	}
	return tag.String()
}
