package shopadapter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"countersign/internal/adapter"
)

// Verify reads the target of call again and reports whether its effect is
// there: a cancellation must show the subscription cancelled as asked and
// its upcoming invoice void; a refund must be listed on the order with its
// amount; a receipt must be among the invoice's receipts; a description or
// an address must equal the new value; a reinstated subscription must be
// active. A write the shop acknowledged but did not apply is not Verified.
// result may be nil (e.g. after an unknown outcome): the shop's evidence
// for the key is used instead. It fails only when the shop cannot be read.
func (a *Adapter) Verify(ctx context.Context, p adapter.Principal, call adapter.Call, result *adapter.Result) (adapter.Verification, error) {
	def, args, err := a.action(call.Action, call.Args)
	if err != nil {
		return adapter.Verification{}, err
	}
	return def.verify(a, ctx, p, call, args, result)
}

// targetRef is the object a call acted on: the confirmed quote's target
// when there is one, the argument otherwise.
func targetRef(call adapter.Call, args map[string]any, param string) string {
	if call.Quote.Target.ID != "" {
		return call.Quote.Target.ID
	}
	return str(args, param)
}

// resultData reads a string fact of a result.
func resultData(res *adapter.Result, field string) (string, bool) {
	if res == nil {
		return "", false
	}
	s, ok := res.Data[field].(string)
	return s, ok
}

// reference derives a stable reference a customer can quote from the
// call's idempotency key: "sub_cancel_8f2c1a9b".
func reference(prefix, key string) string {
	sum := sha256.Sum256([]byte(key))
	return prefix + hex.EncodeToString(sum[:4])
}
