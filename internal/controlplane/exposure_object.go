package controlplane

import (
	"encoding/json"

	"countersign/internal/adapter"
	"countersign/store"
)

// object is what a write acts on as exposure, blocks and duplicates count
// it: the target in its system and, when the adapter read a business key
// for it (its kind declares an identity), the business object it is in
// every system that reaches it. The key comes from the system's read of
// the object, carried on the quote's target: nothing an assistant writes
// sets it. Every rule that counts per target asks this one type, so a
// declared identity widens them all at once.
type object struct {
	system, targetID string
	// key is the business key; its Name is empty when there is none.
	key adapter.BusinessKey
}

// objectOf is the object of target, as its system's adapter read it.
func objectOf(system string, target adapter.Target) object {
	o := object{system: system, targetID: target.ID}
	if k := target.BusinessKey; k != nil && k.Name != "" && k.Value != "" {
		o.key = *k
	}
	return o
}

// recordedObject is the object of a recorded invocation and the currency
// of its amount, both read from its stored quote in one pass: the key is
// the one its quote's target carries.
func recordedObject(row store.Invocation) (object, string) {
	var q struct {
		Target   adapter.Target `json:"target"`
		Currency string         `json:"currency"`
	}
	_ = json.Unmarshal(row.Quote, &q)
	q.Target.ID = row.TargetID
	return objectOf(row.System, q.Target), q.Currency
}

// keyWord is the business key as one word for a lock.
func (o object) keyWord() string { return o.key.Name + "\x1f" + o.key.Value }

// blockKey is the key a block made on o keeps, nil for each part when o
// has none.
func (o object) blockKey() (name, value *string) {
	if o.key.Name == "" {
		return nil, nil
	}
	return &o.key.Name, &o.key.Value
}
