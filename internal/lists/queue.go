package lists

import (
	"context"
	"sync"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/store"
)

// QueueFilter selects cards of the approval queue: the store's filter,
// named here because web names no store type. The lists set its Now from
// their clock.
type QueueFilter = store.QueueFilter

// QueueCursor is a position in the approval queue (the store's cursor).
type QueueCursor = store.QueueCursor

// PendingCountCap bounds the queue's counts (PendingCounts, CountQueue,
// WaitingWork): at the cap the badge says "more than", and the count stays
// cheap however much waits.
const PendingCountCap = store.PendingCountCap

// ApprovalQueue lists a page of invocations awaiting approval, soonest
// deadline first (keyset pagination: pass the last card's cursor as
// After). It fails on a card whose invocation does not decode.
func (s *Service) ApprovalQueue(ctx context.Context, f QueueFilter) ([]controlplane.QueueCard, error) {
	f.Now = s.now()
	rows, err := s.store.ApprovalQueue(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]controlplane.QueueCard, 0, len(rows))
	for _, r := range rows {
		raw := r.Quote
		quote, known := quotes.get(raw)
		if known {
			r.Quote = nullQuote // decoded already: CardFromRow has nothing to decode
		}
		c, err := controlplane.CardFromRow(r)
		if err != nil {
			return nil, err
		}
		if known {
			c.Quote = quote
		} else {
			quotes.put(raw, c.Quote)
		}
		out = append(out, c)
	}
	return out, nil
}

// quotes keeps the quotes the queue has decoded, by their stored JSON: a
// stored quote never changes (a new quote is a new value), and the first
// page shows the same 25 to every agent on every refresh, so decoding
// them was most of reading a card. The cards' quotes are shared between
// pages and only read. Bounded: when full it starts over; a quote over
// quoteMemoMaxBytes is decoded each time.
var quotes = &quoteMemo{m: make(map[string]adapter.Quote)}

var nullQuote = []byte("null")

const (
	quoteMemoEntries = 1024
	// A quote carrying its texts in every shipped language (the shop's
	// refund is about 9 KB with four translations) still fits.
	quoteMemoMaxBytes = 16 << 10
)

type quoteMemo struct {
	mu sync.Mutex
	m  map[string]adapter.Quote
}

func (q *quoteMemo) get(raw []byte) (adapter.Quote, bool) {
	if len(raw) == 0 || len(raw) > quoteMemoMaxBytes || string(raw) == "null" {
		return adapter.Quote{}, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	v, ok := q.m[string(raw)]
	return v, ok
}

func (q *quoteMemo) put(raw []byte, v adapter.Quote) {
	if len(raw) == 0 || len(raw) > quoteMemoMaxBytes || string(raw) == "null" {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.m) >= quoteMemoEntries {
		clear(q.m)
	}
	q.m[string(raw)] = v
}

// CountQueue counts the cards the approval queue shows with this filter
// (the store ignores its After and Limit), up to PendingCountCap.
func (s *Service) CountQueue(ctx context.Context, f QueueFilter) (int, error) {
	f.Now = s.now()
	return s.store.CountQueue(ctx, f)
}

// PendingCounts counts invocations awaiting approval (what the queue
// shows: the header's badge) and unverified ones, each up to
// PendingCountCap.
func (s *Service) PendingCounts(ctx context.Context) (awaitingApproval, unverified int, err error) {
	return s.store.CountPending(ctx)
}

// WaitingWork counts what waits for a person (approvals, unverified
// results, untaken hand-offs) and lists up to listLimit of the oldest
// unverified results.
func (s *Service) WaitingWork(ctx context.Context, listLimit int) (store.WaitingWork, error) {
	return s.store.WaitingWork(ctx, listLimit)
}
