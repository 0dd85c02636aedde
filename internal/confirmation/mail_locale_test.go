package confirmation_test

import (
	"context"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/confirmation"
	"countersign/internal/locale"
)

// countedRecord is a LanguageRecord that counts its reads and answers
// "de".
type countedRecord struct{ reads int }

func (r *countedRecord) LastCustomerLocale(context.Context, string, string) (string, error) {
	r.reads++
	return "de", nil
}

// TestTheLastDecisionIsReadOnlyWhenNothingBeforeItChose: the audit trail
// is read for a mail's language only when neither the business (the page's
// assertion, the customer record) nor the page the customer reads chose
// one; then its answer is the mail's language.
func TestTheLastDecisionIsReadOnlyWhenNothingBeforeItChose(t *testing.T) {
	cases := []struct {
		name    string
		ctx     context.Context
		contact adapter.Contact
		want    string
		reads   int
	}{
		{"the customer record", context.Background(), adapter.Contact{Locale: "fr"}, "fr", 0},
		{"the business's word on the page", onPage("es", locale.FromBusiness), adapter.Contact{}, "es", 0},
		{"the page's switch", onPage("fr", locale.FromSwitch), adapter.Contact{}, "fr", 0},
		{"nothing but the last decision", context.Background(), adapter.Contact{}, "de", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &countedRecord{}
			ch, err := confirmation.MailLanguage(c.ctx, rec, adapter.Brand{Locale: "en"}, "shop", "cus_1", c.contact)
			if err != nil || ch.Tag.String() != c.want || rec.reads != c.reads {
				t.Fatalf("MailLanguage = %s (%v) after %d reads of the audit trail, want %s after %d", ch.Tag, err, rec.reads, c.want, c.reads)
			}
		})
	}
}
