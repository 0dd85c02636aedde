package confirmation_test

import (
	"context"
	"testing"

	"countersign/internal/apperr"
	"countersign/internal/confirmation"
)

// TestTheCodeFieldsErrorsCarryACode: each of the code field's errors
// gives a code (and the tries left as data) beside its English message,
// so that a page words it in its reader's language without reading the
// English; the API's message is unchanged.
func TestTheCodeFieldsErrorsCarryACode(t *testing.T) {
	t.Parallel()
	links, cp, now, outbox := setupWithMail(t)
	ctx := context.Background()
	fieldCode := func(err error) (apperr.FieldCode, string) {
		t.Helper()
		e, ok := apperr.As(err)
		if !ok || e.Kind != apperr.Invalid {
			t.Fatalf("err = %v; want an invalid field", err)
		}
		return e.FieldCodes["code"], e.Fields["code"]
	}

	_, gone := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	if fc, msg := fieldCode(checkCode(links, gone, "123456")); fc.Code != confirmation.CodeGone || msg != "this code no longer works: send a new one" {
		t.Errorf("no code sent: %+v %q; want %s", fc, msg, confirmation.CodeGone)
	}

	_, tok := pendingFor(t, links, cp, *now, jordan, "issue_refund", jordanRefund)
	if _, err := links.SendCode(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if fc, msg := fieldCode(checkCode(links, tok, "12")); fc.Code != confirmation.CodeFormat || fc.Data["digits"] != confirmation.CodeDigits ||
		msg != "enter the 6 digits from the e-mail" {
		t.Errorf("two digits: %+v %q; want %s with the digits", fc, msg, confirmation.CodeFormat)
	}
	wrong := wrongFor(lastCode(t, outbox, jordan))
	fc, msg := fieldCode(checkCode(links, tok, wrong))
	left, _ := fc.Data["tries_left"].(int)
	if fc.Code != confirmation.CodeWrong || left < 1 {
		t.Fatalf("a wrong code: %+v %q; want %s with the tries left", fc, msg, confirmation.CodeWrong)
	}
	for range left - 1 {
		fc, _ = fieldCode(checkCode(links, tok, wrong))
	}
	if got, _ := fc.Data["tries_left"].(int); left > 1 && (fc.Code != confirmation.CodeWrong || got != 1) {
		t.Errorf("the last try but one: %+v; want %s with 1 left", fc, confirmation.CodeWrong)
	}
	if fc, _ := fieldCode(checkCode(links, tok, wrong)); fc.Code != confirmation.CodeLocked {
		t.Errorf("no tries left: %+v; want %s", fc, confirmation.CodeLocked)
	}
}

func checkCode(links *confirmation.Service, token, code string) error {
	_, err := links.CheckCode(context.Background(), token, code)
	return err
}
