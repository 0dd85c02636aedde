package shopadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"countersign/internal/adapter"
)

// client speaks HTTP to one shop. Every failure it returns is an
// *adapter.Error whose cause is a *shopError (the shop answered) or a
// *transportError (it did not).
type client struct {
	base  string
	token string
	http  *http.Client
}

// shopError is an error answer of the shop: its status and its
// provider-style error object.
type shopError struct {
	Status           int    `json:"-"`
	Type             string `json:"type"`
	Code             string `json:"code"`
	Message          string `json:"message"`
	Param            string `json:"param"`
	RefundableCents  *int64 `json:"refundable_cents"`
	CurrentVersion   *int   `json:"current_version"`
	FulfilmentStatus string `json:"fulfilment_status"`
}

func (e *shopError) Error() string {
	return fmt.Sprintf("shop answered %d %s: %s", e.Status, e.Code, e.Message)
}

// read GETs path into out. A read never changes anything, so every failure
// is NotSent.
func (c *client) read(ctx context.Context, path string, out any) error {
	return c.do(ctx, http.MethodGet, path, "", nil, out, false)
}

// write sends a state-changing request with X-Request-Id: key, so the shop
// ties its effects to the call. The header is deliberately not named
// Idempotency-Key: net/http would then treat the request as replayable and
// might send it twice.
func (c *client) write(ctx context.Context, method, path, key string, body, out any) error {
	return c.do(ctx, method, path, key, body, out, true)
}

func (c *client) do(ctx context.Context, method, path, key string, body, out any, write bool) error {
	r := adapter.Request{Method: method, URL: c.base + path, Path: path, Write: write, Prepare: func(req *http.Request) {
		req.Header.Set("Authorization", "Bearer "+c.token)
		if key != "" {
			req.Header.Set("X-Request-Id", key)
		}
	}}
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("shopadapter: encode %s %s: %w", method, path, err)
		}
		r.Body = raw
	}
	status, raw, err := adapter.Exchange(ctx, c.http, "The shop", r)
	if err != nil {
		return err
	}
	if status >= 200 && status < 300 {
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return adapter.Undecodable("The shop", r, err)
		}
		return nil
	}
	se := &shopError{}
	envelope := struct {
		Error *shopError `json:"error"`
	}{Error: se}
	if json.Unmarshal(raw, &envelope) != nil || se.Code == "" {
		se.Code = "http_" + strconv.Itoa(status)
	}
	se.Status = status
	return shopFailure(se, write)
}

// shopCode is how one of the shop's error codes reads to a caller.
type shopCode struct {
	code    string
	message string
	hint    string
	policy  bool
}

// shopCodes maps the shop's error codes; see the table in doc.go.
var shopCodes = map[string]shopCode{
	"card_declined": {"payment_method_declined", "The customer's card was declined.",
		"Ask the customer to update their card; do not retry the cancellation.", false},
	"resource_missing": {adapter.CodeNotFound, "The shop has no such object for this customer.",
		"Use a read tool to list the customer's objects and pass one of their ids.", false},
	"version_conflict": {adapter.CodeStaleTarget, "The object changed since it was read; nothing was changed.",
		"Preview the action again and have the new quote confirmed.", false},
	"subscription_already_cancelled": {"already_cancelled", "The subscription is already cancelled.",
		"Nothing to cancel; tell the customer when their access ends.", false},
	"subscription_not_cancelled": {"not_cancelled", "The subscription is active; only a cancelled subscription can be reinstated.",
		"Nothing to reinstate.", false},
	"subscription_ended": {"subscription_ended", "The subscription's period is over; it cannot be reinstated.",
		"A new subscription is needed; hand this to a person.", false},
	"invoice_already_void": {"invoice_already_void", "The invoice is already void.", "", false},
	"invoice_not_voidable": {"invoice_not_voidable", "The invoice is paid and cannot be voided.", "", false},
	"invoice_not_paid": {"invoice_not_paid", "Only a paid invoice has a receipt to send.",
		"Use get_invoice to find the paid invoice the customer means.", false},
	"order_already_fulfilled": {"order_already_fulfilled", "The order has left the warehouse; its shipping address can no longer be changed.",
		"The parcel has left; a person can arrange a redirect with the carrier.", true},
	"amount_too_large": {"amount_above_refundable", "The amount is more than is left to refund on this order.",
		"Propose at most the refundable balance the quote shows.", false},
	"charge_already_refunded": {"amount_above_refundable", "The order has already been refunded in full.",
		"Nothing is left to refund; do not call issue_refund again for this order.", false},
}

// shopFailure maps an error answer. The shop applies a write in one
// transaction, so a 4xx means nothing changed; a 5xx on a write may have
// committed before it failed.
func shopFailure(se *shopError, write bool) *adapter.Error {
	if se.Status >= 500 {
		return adapter.FailedAnswer("The shop", se.Status, se, write)
	}
	if se.Status == http.StatusBadRequest {
		field := se.Param
		if rest, ok := strings.CutPrefix(field, "shipping_address["); ok {
			field = "address." + strings.TrimSuffix(rest, "]")
		}
		ae := adapter.Invalid(map[string]string{field: "the shop refused this value"})
		ae.Err = se
		return ae
	}
	if c, ok := shopCodes[se.Code]; ok {
		ae := &adapter.Error{Code: c.code, Message: c.message, Hint: c.hint, Outcome: adapter.Refused,
			PolicyRefusal: c.policy, Err: se}
		if se.RefundableCents != nil && c.code == "amount_above_refundable" {
			ae.Fields = map[string]string{"amount_cents": fmt.Sprintf("at most %d cents are left to refund", *se.RefundableCents)}
		}
		return ae
	}
	return adapter.FailedAnswer("The shop", se.Status, se, write)
}

// answered reports whether err carries an error answer of the shop (as
// opposed to no answer at all).
func answered(err error) bool {
	var se *shopError
	return errors.As(err, &se)
}
