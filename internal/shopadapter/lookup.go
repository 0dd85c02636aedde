package shopadapter

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"

	"countersign/internal/adapter"
)

// Lookup inspects an earlier call by its idempotency key, read-only: the
// request ledger's entry and the shop's effects recorded under the key. When
// the ledger has the call's result it is returned; otherwise, when the
// shop's evidence shows the whole effect (a refund.created effect, a
// cancellation with its invoice voided and not undone, …), a result is
// rebuilt from it. A missing record is reported as Found false with no
// effects, which is not proof that nothing happened. The shop's ledger is
// its system of record, authoritative: each effect commits with its
// X-Request-Id in the change's own transaction and GET /_ledger reads that
// store, so a call whose outcome the request ledger does not know, with
// no effect under its key SettleAfter after it was begun, is reported
// NotApplied (adapter.NotApplied) for reconcile to settle.
func (a *Adapter) Lookup(ctx context.Context, _ adapter.Principal, call adapter.Call) (adapter.LookupResult, error) {
	def, _, err := a.action(call.Action, call.Args)
	if err != nil {
		return adapter.LookupResult{}, err
	}
	out, err := a.ledger.Lookup(ctx, a.name, call.IdempotencyKey)
	if err != nil {
		return adapter.LookupResult{}, err
	}
	effects, err := a.effects(ctx, call.IdempotencyKey)
	if err != nil {
		return adapter.LookupResult{}, err
	}
	for _, e := range effects {
		eff := adapter.Effect{ID: strconv.FormatInt(e.ID, 10), At: e.At, Kind: e.Kind, Object: e.Object}
		var data struct {
			AmountCents *int64 `json:"amount_cents"`
		}
		if json.Unmarshal(e.Data, &data) == nil {
			eff.AmountCents = data.AmountCents
		}
		out.Effects = append(out.Effects, eff)
	}
	if effects != nil && len(effects) == 0 {
		// Only the ledger's list, and empty, says nothing is there (a
		// JSON null is no list).
		out.NotApplied = adapter.NotApplied(out, a.now(), a.settleAfter, a.brand.Name)
	}
	if out.Result == nil {
		out.Result = def.evidence(call.IdempotencyKey, effects)
	}
	if out.Result != nil && out.Result.ShortReference == "" {
		withShortReference(out.Result)
	}
	return out, nil
}

// effects reads the shop's effects recorded under key (X-Request-Id).
func (a *Adapter) effects(ctx context.Context, key string) ([]shopEffect, error) {
	var effects []shopEffect
	err := a.shop.read(ctx, "/_ledger?request_id="+url.QueryEscape(key), &effects)
	return effects, err
}

// singleEffect recognises a one-request action by its effect kind. The
// reference comes from the effect's data field when given, or is derived
// from the key with prefix.
func singleEffect(kind, prefix, field string) func(string, []shopEffect) *adapter.Result {
	return func(key string, effects []shopEffect) *adapter.Result {
		for _, e := range effects {
			if e.Kind != kind {
				continue
			}
			ref := reference(prefix, key)
			if field != "" {
				var data map[string]any
				if json.Unmarshal(e.Data, &data) != nil {
					continue
				}
				ref, _ = data[field].(string)
				if ref == "" {
					continue
				}
			}
			return &adapter.Result{Reference: ref, Steps: []adapter.Step{{Name: kind, Outcome: "applied", Detail: e.Object}}}
		}
		return nil
	}
}
