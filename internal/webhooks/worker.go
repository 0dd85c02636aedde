package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"countersign/store"
)

// Render returns an invocation as the API shows it (GET
// /api/v1/invocations/{id}); the web package supplies it, so that a
// delivery's body and the API never drift apart.
type Render func(ctx context.Context, invocationID string) (any, error)

// workerStore is what enqueueing and delivering need of the store.
type workerStore interface {
	NewWebhookEvents(ctx context.Context, actions []string, lookback, batch int64) ([]store.WebhookEvent, int64, error)
	SetWebhookWatermark(ctx context.Context, id int64) error
	InsertWebhookDelivery(ctx context.Context, d store.WebhookDelivery) (bool, error)
	ClaimWebhookDeliveries(ctx context.Context, now, leaseUntil time.Time, token string, limit int) ([]store.ClaimedDelivery, error)
	FinishWebhookAttempt(ctx context.Context, token string, a store.WebhookAttempt, state string, next time.Time) error
}

// Payload is the body of every delivery.
type Payload struct {
	// Event is the event's name, e.g. "invocation.completed".
	Event string `json:"event"`
	// EventID is the audit event's id: unique, increasing.
	EventID int64 `json:"event_id"`
	// OccurredAt is when the event happened.
	OccurredAt time.Time `json:"occurred_at"`
	// Invocation is the invocation as GET /api/v1/invocations/{id} showed
	// it when the event was enqueued (usually within seconds of it); absent
	// from a hand-off's event.
	Invocation json.RawMessage `json:"invocation,omitempty"`
	// Conversation is, for a hand-off's event (HandoffOutcomes), the
	// conversation as GET /api/v1/conversations/{id} shows it, as it was
	// when the event happened.
	Conversation json.RawMessage `json:"conversation,omitempty"`
}

// Worker enqueues outcome events and delivers them. Any number of workers,
// in any number of console instances, may run against one database.
type Worker struct {
	store  workerStore
	render Render
	http   *http.Client
	now    func() time.Time
	log    *slog.Logger
	// lease is how long a claimed delivery is this worker's.
	lease time.Duration
	// legacy also signs with Countersign-Signature (Config.LegacySignature).
	legacy bool
}

// The enqueuer's reading window, in event ids (see store.NewWebhookEvents).
const (
	eventLookback = 1000
	eventBatch    = 5000
)

// maxResponseBody is how much of an endpoint's answer is kept.
const maxResponseBody = 1024

// NewWorker returns a worker; now and log may be nil (time.Now; no log).
// cfg says which addresses its deliveries may connect to (Config.client).
func NewWorker(st workerStore, render Render, cfg Config, now func() time.Time, log *slog.Logger) *Worker {
	client := cfg.client()
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// A delivery is claimed on its own, just before it is sent: its lease
	// covers one attempt timing out. A console that dies or freezes holding
	// it delays it (and the later events of its invocation, which go in
	// order) by that lease at most, not by a whole batch's worth.
	return &Worker{store: st, render: render, http: client, now: now, log: log,
		lease: client.Timeout + 30*time.Second, legacy: cfg.LegacySignature}
}

// Backoff is how long to wait after the n-th failed attempt (n ≥ 1):
// 30 seconds, doubling, at most an hour.
func Backoff(n int) time.Duration {
	d := 30 * time.Second
	for i := 1; i < n && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// Run enqueues and delivers every interval until ctx ends.
func (w *Worker) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := w.Enqueue(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("webhooks: enqueue", "error", err)
		}
		if _, err := w.DeliverDue(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("webhooks: deliver", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Enqueue turns the outcome events recorded since the last call into
// deliveries, one per (endpoint, event), and returns how many it added.
// Two instances enqueueing at once add each delivery once.
func (w *Worker) Enqueue(ctx context.Context) (int, error) {
	events, upTo, err := w.store.NewWebhookEvents(ctx, Names(append(slices.Clone(Outcomes), HandoffOutcomes...)), eventLookback, eventBatch)
	if err != nil {
		return 0, err
	}
	added := 0
	for _, e := range events {
		p := Payload{Event: e.Event, EventID: e.EventID, OccurredAt: e.At.UTC()}
		if e.InvocationID == "" {
			p.Conversation, err = handoffConversation(e)
		} else {
			p.Invocation, err = w.renderJSON(ctx, e.InvocationID)
		}
		if err != nil {
			// One invocation that cannot be shown must not hold up every
			// endpoint; it is tried again while its event is within the
			// enqueuer's look-back.
			w.log.Warn("webhooks: event not enqueued", "event_id", e.EventID, "invocation", e.InvocationID, "error", err)
			continue
		}
		body, err := json.Marshal(p)
		if err != nil {
			return added, err
		}
		now := w.now()
		ok, err := w.store.InsertWebhookDelivery(ctx, store.WebhookDelivery{WebhookID: e.WebhookID, EventID: e.EventID,
			Event: e.Event, InvocationID: orderKey(e), Payload: body, CreatedAt: now, RetryUntil: now.Add(RetryFor)})
		if err != nil {
			return added, err
		}
		if ok {
			added++
		}
	}
	return added, w.store.SetWebhookWatermark(ctx, upTo)
}

// handoffKey prefixes the ordering key of a conversation's hand-off
// deliveries.
const handoffKey = "handoff:"

// orderKey is what a delivery is ordered by (store.ClaimWebhookDeliveries
// holds one back while an earlier one of the same key is pending): its
// invocation, or for a hand-off's ending its conversation, so one
// conversation's failing delivery holds back no other conversation's.
func orderKey(e store.WebhookEvent) string {
	if e.InvocationID != "" {
		return e.InvocationID
	}
	var d struct {
		ConversationID string `json:"conversation_id"`
	}
	_ = json.Unmarshal(e.Data, &d)
	return handoffKey + d.ConversationID
}

// handoffConversation is a hand-off event's conversation, from what the
// event recorded when the person ended it (handoffs.Service.Close).
func handoffConversation(e store.WebhookEvent) (json.RawMessage, error) {
	var d struct {
		HandoffID      int64      `json:"latest_handoff_id"`
		ConversationID string     `json:"conversation_id"`
		Outcome        string     `json:"outcome"`
		Note           string     `json:"note"`
		ActorName      string     `json:"actor_name"`
		HandedOffAt    time.Time  `json:"handed_off_at"`
		TakenAt        *time.Time `json:"taken_at"`
		// TakenOver is a manager's take-over of the round, as the API
		// shows it (handoffs.Takeover).
		TakenOver json.RawMessage `json:"taken_over"`
	}
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return nil, fmt.Errorf("webhooks: hand-off event %d: %w", e.EventID, err)
	}
	if d.ConversationID == "" {
		return nil, fmt.Errorf("webhooks: hand-off event %d names no conversation", e.EventID)
	}
	at := e.At.UTC()
	if d.TakenAt == nil {
		d.TakenAt = &at
	}
	h := map[string]any{"id": d.HandoffID, "state": d.Outcome, "handed_off_at": d.HandedOffAt.UTC(), "taken_at": d.TakenAt.UTC(),
		"closed_at": at, "by": d.ActorName, "note": d.Note}
	if len(d.TakenOver) > 0 && string(d.TakenOver) != "null" {
		h["taken_over"] = d.TakenOver
	}
	return json.Marshal(map[string]any{"conversation_id": d.ConversationID, "handoff": h})
}

func (w *Worker) renderJSON(ctx context.Context, invocationID string) (json.RawMessage, error) {
	inv, err := w.render(ctx, invocationID)
	if err != nil {
		return nil, fmt.Errorf("webhooks: render invocation %s: %w", invocationID, err)
	}
	return json.Marshal(inv)
}

// DeliverDue claims due deliveries and sends each once, until none is due,
// and returns how many attempts it made. A failed attempt is scheduled
// again after Backoff, or given up once its day of retries is over.
func (w *Worker) DeliverDue(ctx context.Context) (int, error) {
	n := 0
	for {
		now := w.now()
		token := randomHex(12)
		claimed, err := w.store.ClaimWebhookDeliveries(ctx, now, now.Add(w.lease), token, 1)
		if err != nil || len(claimed) == 0 {
			return n, err
		}
		if err := w.attempt(ctx, token, claimed[0]); err != nil {
			return n, err
		}
		n++
	}
}

func (w *Worker) attempt(ctx context.Context, token string, d store.ClaimedDelivery) error {
	at := w.now()
	status, body, sendErr := w.send(ctx, d, at)
	if sendErr != nil && ctx.Err() != nil {
		// Shutting down is not the endpoint's failure: the lease runs out
		// and an instance that is still running sends it.
		return ctx.Err()
	}
	rec := store.WebhookAttempt{DeliveryID: d.ID, At: at, Body: body}
	if status != 0 {
		rec.Status = &status
	}
	state, next := Delivered, at
	if sendErr != nil {
		rec.Error = sendErr.Error()
		state, next = Pending, at.Add(Backoff(d.Attempts))
		if !next.Before(d.RetryUntil) {
			state = Failed
		}
		w.log.Info("webhooks: attempt failed", "delivery", d.ID, "event", d.Event, "attempt", d.Attempts, "state", state, "error", sendErr)
	}
	err := w.store.FinishWebhookAttempt(ctx, token, rec, string(state), next)
	if errors.Is(err, store.ErrNotFound) {
		// The lease ran out during the attempt (a resend waits for it);
		// whoever holds the delivery now records its own attempt.
		w.log.Warn("webhooks: lease lost", "delivery", d.ID)
		return nil
	}
	return err
}

// send posts one delivery and returns the status, the first KiB of a 2xx
// answer (nothing of any other), and an error unless the endpoint answered
// 2xx.
func (w *Worker) send(ctx context.Context, d store.ClaimedDelivery, at time.Time) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Payload))
	if err != nil {
		return 0, "", err
	}
	id := strconv.FormatInt(d.ID, 10)
	sig, err := SignStandard(d.Secret, id, at, d.Payload)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Countersign-Webhooks/1")
	req.Header.Set(IDHeader, id)
	req.Header.Set(TimestampHeader, strconv.FormatInt(at.Unix(), 10))
	req.Header.Set(StandardSignatureHeader, sig)
	if w.legacy {
		req.Header.Set(SignatureHeader, Sign(d.Secret, at, d.Payload))
	}
	req.Header.Set(DeliveryHeader, id)
	req.Header.Set(EventHeader, d.Event)
	res, err := w.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		// Neither the body nor the server's own reason phrase is kept: an
		// error page of whatever answered is not the admin's to read.
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		return res.StatusCode, "", fmt.Errorf("endpoint answered %d %s", res.StatusCode, http.StatusText(res.StatusCode))
	}
	b, _ := io.ReadAll(io.LimitReader(res.Body, maxResponseBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	// PostgreSQL text takes neither NUL nor invalid UTF-8.
	kept := strings.ToValidUTF8(strings.ReplaceAll(string(b), "\x00", ""), "\uFFFD")
	return res.StatusCode, kept, nil
}
