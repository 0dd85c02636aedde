// Package webhooks tells an assistant what became of its invocations: when
// one is decided (confirmed, declined, approved, rejected, sent back,
// expired) or settles (completed, failed, not dispatched, unverified,
// reconciled), Countersign POSTs the invocation to the assistant's
// registered endpoint, signed as Standard Webhooks sign (SignStandard,
// VerifyStandard; the older Countersign-Signature on request, Sign and
// Verify). Deliveries are enqueued from the events table, claimed in
// PostgreSQL so several console instances send each once, sent in order per
// invocation, and retried with exponential back-off for a day.
package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// SecretPrefix starts every signing secret, so a leaked one is
// recognisable.
const SecretPrefix = "whsec_"

// RetryFor is how long a delivery is retried after it is enqueued or
// resent before it is given up.
const RetryFor = 24 * time.Hour

// Outcomes are the invocation events delivered: its decisions and its
// settlements.
var Outcomes = []controlplane.EventAction{
	controlplane.EventInvocationConfirmed, controlplane.EventInvocationDeclined, controlplane.EventInvocationApproved,
	controlplane.EventInvocationRejected, controlplane.EventInvocationSentBack, controlplane.EventInvocationExpired,
	controlplane.EventInvocationCompleted, controlplane.EventInvocationFailed, controlplane.EventInvocationNotDispatched,
	controlplane.EventInvocationUnverified, controlplane.EventInvocationReconciled,
}

// HandoffOutcomes are the conversation events delivered: a person ended
// the assistant's hand-off — resolved it, or gave the conversation back
// with a note of what to do next. Their body carries the conversation's
// hand-off as GET /api/v1/conversations/{id} shows it, as it was when the
// person ended it.
var HandoffOutcomes = []controlplane.EventAction{controlplane.EventHandoffResolved, controlplane.EventHandoffGivenBack}

// Names are events' stored names, as the store's queries take them.
func Names(events []controlplane.EventAction) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = string(e)
	}
	return out
}

// State is where a delivery stands. Each value is mirrored by the CHECK
// constraint on webhook_deliveries.state.
type State string

// The delivery states.
const (
	// Pending: not yet delivered; tried at its next attempt time.
	Pending State = "pending"
	// Delivered: the endpoint answered 2xx.
	Delivered State = "delivered"
	// Failed: given up, after a day of retries or because its endpoint was
	// removed; a resend makes it pending again.
	Failed State = "failed"
)

// serviceStore is what the admin side needs of the store.
type serviceStore interface {
	Assistant(ctx context.Context, id string) (store.Assistant, error)
	ReplaceWebhook(ctx context.Context, w store.Webhook) (store.Webhook, error)
	RemoveWebhook(ctx context.Context, assistantID string, at time.Time) error
	LiveWebhooks(ctx context.Context) (map[string]store.Webhook, error)
	WebhookDeliveries(ctx context.Context, assistantID string, limit int) ([]store.ListedDelivery, error)
	WebhookAttempts(ctx context.Context, deliveryIDs []int64) ([]store.WebhookAttempt, error)
	ResendWebhookDelivery(ctx context.Context, assistantID string, deliveryID int64, now, retryUntil time.Time) error
	QueueWebhookTest(ctx context.Context, assistantID string, e store.Event, payload func(eventID int64) ([]byte, error), retryUntil time.Time) (int64, error)
}

// Service registers endpoints and shows and resends deliveries, for the
// admin pages.
type Service struct {
	store serviceStore
	now   func() time.Time
	cfg   Config
}

// New returns the service; now is the clock (time.Now when nil); cfg says
// where endpoints may be.
func New(st serviceStore, now func() time.Time, cfg Config) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, now: now, cfg: cfg}
}

// Endpoint is an assistant's live endpoint as it may be shown: never its
// secret.
type Endpoint struct {
	ID          string
	AssistantID string
	URL         string
	CreatedAt   time.Time
}

// Delivery is one event told (or being told) to an endpoint, with every
// attempt.
type Delivery struct {
	ID            int64
	Event         string
	InvocationID  string
	State         State
	CreatedAt     time.Time
	NextAttemptAt time.Time
	Attempts      []Attempt
	// URL is the endpoint the delivery was made for, which may since have
	// been replaced; EndpointRemoved says it was (removed or replaced): its
	// pending deliveries were given up then, and none is tried again.
	URL             string
	EndpointRemoved bool
}

// Attempt is one try and the endpoint's answer. Status is 0 when none came
// (Error says why); Body is at most the first KiB of a 2xx answer, and
// empty for any other: an address that answers with an error may be a
// service that was never meant to be read from the console.
type Attempt struct {
	At     time.Time
	Status int
	Body   string
	Error  string
}

// Register makes rawURL the assistant's endpoint, replacing any earlier one,
// and returns it with its signing secret, which is shown once. Errors:
// Invalid naming the field "url" when it is not an https URL on a public
// address (Config.CheckURL); NotFound when there is no such assistant.
func (s *Service) Register(ctx context.Context, assistantID string, createdBy *int64, rawURL string) (Endpoint, string, error) {
	u, err := s.cfg.CheckURL(rawURL)
	if err != nil {
		return Endpoint{}, "", err
	}
	if _, err := s.store.Assistant(ctx, assistantID); err != nil {
		return Endpoint{}, "", err
	}
	// Standard Webhooks: the secret is base64 after whsec_, its key the
	// decoded bytes (32 of them, within the 24-64 the spec recommends).
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	secret := SecretPrefix + base64.StdEncoding.EncodeToString(key)
	w, err := s.store.ReplaceWebhook(ctx, store.Webhook{ID: "whk_" + randomHex(8), AssistantID: assistantID, URL: u,
		Secret: secret, CreatedBy: createdBy, CreatedAt: s.now()})
	if err != nil {
		return Endpoint{}, "", err
	}
	return endpointFromRow(w), secret, nil
}

// Remove stops deliveries to the assistant's endpoint; pending ones are
// given up. NotFound when it has none.
func (s *Service) Remove(ctx context.Context, assistantID string) error {
	err := s.store.RemoveWebhook(ctx, assistantID, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return apperr.Wrap(err, apperr.NotFound, "This assistant has no endpoint.")
	}
	return err
}

// Endpoints returns every live endpoint by assistant id.
func (s *Service) Endpoints(ctx context.Context) (map[string]Endpoint, error) {
	rows, err := s.store.LiveWebhooks(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Endpoint, len(rows))
	for k, w := range rows {
		out[k] = endpointFromRow(w)
	}
	return out, nil
}

// Deliveries returns the assistant's latest deliveries, newest first, each
// with its attempts oldest first.
func (s *Service) Deliveries(ctx context.Context, assistantID string, limit int) ([]Delivery, error) {
	rows, err := s.store.WebhookDeliveries(ctx, assistantID, limit)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	ids := make([]int64, len(rows))
	index := map[int64]int{}
	out := make([]Delivery, len(rows))
	for i, d := range rows {
		ids[i] = d.ID
		index[d.ID] = i
		out[i] = Delivery{ID: d.ID, Event: d.Event, InvocationID: d.InvocationID, State: State(d.State),
			CreatedAt: d.CreatedAt, NextAttemptAt: d.NextAttemptAt, URL: d.URL, EndpointRemoved: d.RemovedAt != nil}
		if strings.HasPrefix(d.InvocationID, handoffKey) {
			out[i].InvocationID = "" // a conversation's hand-off, ordered by its conversation
		}
	}
	attempts, err := s.store.WebhookAttempts(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, a := range attempts {
		at := Attempt{At: a.At, Body: a.Body, Error: a.Error}
		if a.Status != nil {
			at.Status = *a.Status
		}
		out[index[a.DeliveryID]].Attempts = append(out[index[a.DeliveryID]].Attempts, at)
	}
	return out, nil
}

// Resend sends one of the assistant's deliveries again as soon as a worker
// is free, retried for another day; its receiver sees the same delivery id
// again. Conflict when there is no such delivery to the assistant's live
// endpoint or it is being sent at this moment.
func (s *Service) Resend(ctx context.Context, assistantID string, deliveryID int64) error {
	now := s.now()
	err := s.store.ResendWebhookDelivery(ctx, assistantID, deliveryID, now, now.Add(RetryFor))
	if errors.Is(err, store.ErrNotFound) {
		return apperr.Wrap(err, apperr.Conflict, "This delivery cannot be resent: it is being sent right now, or its endpoint was removed.")
	}
	return err
}

func endpointFromRow(w store.Webhook) Endpoint {
	return Endpoint{ID: w.ID, AssistantID: w.AssistantID, URL: w.URL, CreatedAt: w.CreatedAt}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TestPayload is the body of a test delivery an admin asks for ("Send test
// event"): its event is controlplane.EventWebhookTest, with "test": true and
// no invocation.
type TestPayload struct {
	Event      string    `json:"event"`
	EventID    int64     `json:"event_id"`
	OccurredAt time.Time `json:"occurred_at"`
	Test       bool      `json:"test"`
	// Invocation is always null: a test is about no invocation.
	Invocation *struct{} `json:"invocation"`
}

// SendTest records that the admin asked for a test delivery (an audit
// event by them) and queues it to the assistant's live endpoint, signed
// and retried like every delivery: the normal worker sends it, and it is
// listed with the others. by is the admin, with how they were identified.
// It returns the delivery's id. NotFound when the assistant has no
// endpoint.
func (s *Service) SendTest(ctx context.Context, assistantID string, by controlplane.Actor) (int64, error) {
	now := s.now()
	e, err := controlplane.AuditEvent(now, by, controlplane.EventWebhookTest, "", "", map[string]any{"assistant_id": assistantID})
	if err != nil {
		return 0, err
	}
	id, err := s.store.QueueWebhookTest(ctx, assistantID, e, func(eventID int64) ([]byte, error) {
		return json.Marshal(TestPayload{Event: string(controlplane.EventWebhookTest), EventID: eventID, OccurredAt: now.UTC(), Test: true})
	}, now.Add(RetryFor))
	if errors.Is(err, store.ErrNotFound) {
		return 0, apperr.Wrap(err, apperr.NotFound, "This assistant has no endpoint to send a test to.")
	}
	return id, err
}
