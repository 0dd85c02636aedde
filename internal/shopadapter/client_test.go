package shopadapter

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
)

// TestShopFailureMapping turns every kind of shop answer into a
// structured error; no bare status reaches a caller.
func TestShopFailureMapping(t *testing.T) {
	t.Parallel()
	type want struct {
		Code      string
		Outcome   adapter.Outcome
		Retryable bool
		Policy    bool
	}
	cases := []struct {
		status int
		code   string
		write  bool
		want   want
	}{
		{402, "card_declined", true, want{"payment_method_declined", adapter.Refused, false, false}},
		{404, "resource_missing", false, want{adapter.CodeNotFound, adapter.Refused, false, false}},
		{404, "unrecognized_request_url", true, want{"system_rejected", adapter.Refused, false, false}},
		{409, "version_conflict", true, want{adapter.CodeStaleTarget, adapter.Refused, false, false}},
		{409, "subscription_already_cancelled", true, want{"already_cancelled", adapter.Refused, false, false}},
		{409, "subscription_not_cancelled", true, want{"not_cancelled", adapter.Refused, false, false}},
		{409, "subscription_ended", true, want{"subscription_ended", adapter.Refused, false, false}},
		{409, "invoice_already_void", true, want{"invoice_already_void", adapter.Refused, false, false}},
		{409, "invoice_not_voidable", true, want{"invoice_not_voidable", adapter.Refused, false, false}},
		{409, "invoice_not_paid", true, want{"invoice_not_paid", adapter.Refused, false, false}},
		{409, "order_already_fulfilled", true, want{"order_already_fulfilled", adapter.Refused, false, true}},
		{422, "amount_too_large", true, want{"amount_above_refundable", adapter.Refused, false, false}},
		{422, "charge_already_refunded", true, want{"amount_above_refundable", adapter.Refused, false, false}},
		{400, "parameter_invalid", true, want{adapter.CodeInvalidArguments, adapter.Refused, false, false}},
		{418, "http_418", true, want{"system_rejected", adapter.Refused, false, false}},
		{500, "internal_error", true, want{adapter.CodeOutcomeUnknown, adapter.Unknown, false, false}},
		{503, "http_503", true, want{adapter.CodeOutcomeUnknown, adapter.Unknown, false, false}},
		{500, "internal_error", false, want{"system_error", adapter.NotSent, true, false}},
	}
	for _, tc := range cases {
		se := &shopError{Status: tc.status, Code: tc.code, Message: "shop text", Param: "shipping_address[country]"}
		ae := shopFailure(se, tc.write)
		got := want{ae.Code, ae.Outcome, ae.Retryable, ae.PolicyRefusal}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%d %s write=%t (-want +got):\n%s", tc.status, tc.code, tc.write, diff)
		}
		if ae.Message == "" || ae.Message == se.Message || !errors.Is(ae, se) {
			t.Errorf("%d %s: message %q, cause kept: %t", tc.status, tc.code, ae.Message, errors.Is(ae, se))
		}
	}
	if ae := shopFailure(&shopError{Status: 400, Code: "parameter_invalid", Param: "shipping_address[country]"}, true); ae.Fields["address.country"] == "" {
		t.Errorf("fields %v, want address.country named", ae.Fields)
	}
}
