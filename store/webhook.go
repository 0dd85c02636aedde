package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Webhook is a row of assistant_webhooks: the endpoint an assistant is told
// its invocations' outcomes at, and the secret that signs them.
type Webhook struct {
	ID          string     `db:"id"`
	AssistantID string     `db:"assistant_id"`
	URL         string     `db:"url"`
	Secret      string     `db:"secret"`
	FromEventID int64      `db:"from_event_id"`
	CreatedBy   *int64     `db:"created_by"`
	CreatedAt   time.Time  `db:"created_at"`
	RemovedAt   *time.Time `db:"removed_at"`
}

const webhookColumns = `id, assistant_id, url, secret, from_event_id, created_by, created_at, removed_at`

// WebhookDelivery is a row of webhook_deliveries: one event to be told to
// one endpoint, with where its retries stand.
type WebhookDelivery struct {
	ID            int64           `db:"id"`
	WebhookID     string          `db:"webhook_id"`
	EventID       int64           `db:"event_id"`
	Event         string          `db:"event"`
	InvocationID  string          `db:"invocation_id"`
	Payload       json.RawMessage `db:"payload"`
	State         string          `db:"state"`
	Attempts      int             `db:"attempts"`
	CreatedAt     time.Time       `db:"created_at"`
	RetryUntil    time.Time       `db:"retry_until"`
	NextAttemptAt time.Time       `db:"next_attempt_at"`
	FinishedAt    *time.Time      `db:"finished_at"`
}

const deliveryColumns = `d.id, d.webhook_id, d.event_id, d.event, d.invocation_id, d.payload, d.state, d.attempts,
	d.created_at, d.retry_until, d.next_attempt_at, d.finished_at`

// ClaimedDelivery is a delivery leased to one worker, with where to send it.
type ClaimedDelivery struct {
	WebhookDelivery
	URL    string `db:"url"`
	Secret string `db:"secret"`
}

// WebhookAttempt is a row of webhook_attempts: one try and what the
// endpoint answered. Status is nil when no answer came.
type WebhookAttempt struct {
	ID         int64     `db:"id"`
	DeliveryID int64     `db:"delivery_id"`
	At         time.Time `db:"at"`
	Status     *int      `db:"status"`
	Body       string    `db:"body"`
	Error      string    `db:"error"`
}

// WebhookEvent is an event an endpoint has not been sent yet: an
// invocation's (InvocationID set), or a conversation's hand-off ending
// (InvocationID empty, Data the event's data, which names the assistant).
type WebhookEvent struct {
	WebhookID    string          `db:"webhook_id"`
	EventID      int64           `db:"event_id"`
	Event        string          `db:"action"`
	InvocationID string          `db:"invocation_id"`
	At           time.Time       `db:"at"`
	Data         json.RawMessage `db:"data"`
}

// ReplaceWebhook makes w the assistant's live endpoint: an earlier one is
// removed and its pending deliveries are given up. Events already recorded
// are never sent to w.
func (s *Store) ReplaceWebhook(ctx context.Context, w Webhook) (Webhook, error) {
	var out Webhook
	err := s.InTx(ctx, func(t *Tx) error {
		if err := t.removeWebhook(ctx, w.AssistantID, w.CreatedAt); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		rows, _ := t.tx.Query(ctx, `
			INSERT INTO assistant_webhooks (id, assistant_id, url, secret, from_event_id, created_by, created_at)
			VALUES ($1, $2, $3, $4, (SELECT coalesce(max(id), 0) FROM events), $5, $6)
			RETURNING `+webhookColumns, w.ID, w.AssistantID, w.URL, w.Secret, w.CreatedBy, w.CreatedAt)
		var err error
		out, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Webhook])
		return err
	})
	if err != nil {
		return Webhook{}, fmt.Errorf("store.ReplaceWebhook(%s): %w", w.AssistantID, err)
	}
	return out, nil
}

// RemoveWebhook removes the assistant's live endpoint and gives up its
// pending deliveries; ErrNotFound when it has none.
func (s *Store) RemoveWebhook(ctx context.Context, assistantID string, at time.Time) error {
	err := s.InTx(ctx, func(t *Tx) error { return t.removeWebhook(ctx, assistantID, at) })
	if err != nil {
		return fmt.Errorf("store.RemoveWebhook(%s): %w", assistantID, err)
	}
	return nil
}

func (t *Tx) removeWebhook(ctx context.Context, assistantID string, at time.Time) error {
	var id string
	err := t.tx.QueryRow(ctx, `UPDATE assistant_webhooks SET removed_at = $2
		WHERE assistant_id = $1 AND removed_at IS NULL RETURNING id`, assistantID, at).Scan(&id)
	if err != nil {
		return notFound(err, "endpoint")
	}
	_, err = t.tx.Exec(ctx, `UPDATE webhook_deliveries SET state = 'failed', finished_at = $2, lease_token = NULL, lease_until = NULL
		WHERE webhook_id = $1 AND state = 'pending'`, id, at)
	return err
}

// LiveWebhooks returns every assistant's live endpoint by assistant id.
func (s *Store) LiveWebhooks(ctx context.Context) (map[string]Webhook, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+webhookColumns+` FROM assistant_webhooks WHERE removed_at IS NULL`)
	list, err := pgx.CollectRows(rows, pgx.RowToStructByName[Webhook])
	if err != nil {
		return nil, fmt.Errorf("store.LiveWebhooks: %w", err)
	}
	out := make(map[string]Webhook, len(list))
	for _, w := range list {
		out[w.AssistantID] = w
	}
	return out, nil
}

// NewWebhookEvents reads the events after the enqueuer's watermark (less
// lookback ids, so that an event whose transaction committed after a later
// id was read is still found) up to at most batch ids past it, and returns
// those of the given actions on invocations of assistants with a live
// endpoint that have no delivery yet, oldest first, with the id the
// watermark may move to once they are enqueued. Events of no invocation
// go to the endpoint of the assistant their data names (assistant_id).
func (s *Store) NewWebhookEvents(ctx context.Context, actions []string, lookback, batch int64) ([]WebhookEvent, int64, error) {
	var w, upTo int64
	err := s.pool.QueryRow(ctx, `SELECT last_id, least((SELECT coalesce(max(id), 0) FROM events), last_id + $1)
		FROM webhook_watermark`, batch).Scan(&w, &upTo)
	if err != nil {
		return nil, 0, fmt.Errorf("store.NewWebhookEvents: watermark: %w", err)
	}
	rows, _ := s.pool.Query(ctx, `
		SELECT w.id AS webhook_id, e.id AS event_id, e.action, e.invocation_id, e.at, NULL::jsonb AS data
		FROM events e
		JOIN invocations i ON i.id = e.invocation_id
		JOIN tasks t ON t.id = i.task_id
		JOIN assistant_webhooks w ON w.assistant_id = t.assistant_id AND w.removed_at IS NULL AND e.id > w.from_event_id
		WHERE e.id > $1 AND e.id <= $2 AND e.action = ANY($3)
		  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.event_id = e.id)
		UNION ALL
		-- Events of no invocation (a hand-off's end) name their assistant.
		SELECT w.id, e.id, e.action, '', e.at, e.data
		FROM events e
		JOIN assistant_webhooks w ON w.assistant_id = e.data->>'assistant_id' AND w.removed_at IS NULL AND e.id > w.from_event_id
		WHERE e.id > $1 AND e.id <= $2 AND e.action = ANY($3) AND e.invocation_id IS NULL
		  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.event_id = e.id)
		ORDER BY event_id`, max(w-lookback, 0), upTo, actions)
	events, err := pgx.CollectRows(rows, pgx.RowToStructByName[WebhookEvent])
	if err != nil {
		return nil, 0, fmt.Errorf("store.NewWebhookEvents: %w", err)
	}
	return events, upTo, nil
}

// SetWebhookWatermark moves the enqueuer's watermark forward to id (never
// back).
func (s *Store) SetWebhookWatermark(ctx context.Context, id int64) error {
	if _, err := s.pool.Exec(ctx, `UPDATE webhook_watermark SET last_id = greatest(last_id, $1)`, id); err != nil {
		return fmt.Errorf("store.SetWebhookWatermark: %w", err)
	}
	return nil
}

// InsertWebhookDelivery enqueues a delivery; false when the endpoint has
// one for that event already (another instance enqueued it first).
func (s *Store) InsertWebhookDelivery(ctx context.Context, d WebhookDelivery) (bool, error) {
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO webhook_deliveries (webhook_id, event_id, event, invocation_id, payload, created_at, retry_until, next_attempt_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $6)
		ON CONFLICT (webhook_id, event_id) DO NOTHING`,
		d.WebhookID, d.EventID, d.Event, d.InvocationID, d.Payload, d.CreatedAt, d.RetryUntil)
	if err != nil {
		return false, fmt.Errorf("store.InsertWebhookDelivery(%s, %d): %w", d.WebhookID, d.EventID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// ClaimWebhookDeliveries leases up to limit due deliveries to the caller
// until leaseUntil under token, counting an attempt on each. A delivery is
// due when it is pending, its next attempt time has come, no live lease
// holds it, its endpoint is live, and no earlier event of the same
// invocation is still pending for that endpoint (so an invocation's events
// arrive in order). Rows another instance is claiming are skipped.
func (s *Store) ClaimWebhookDeliveries(ctx context.Context, now, leaseUntil time.Time, token string, limit int) ([]ClaimedDelivery, error) {
	rows, _ := s.pool.Query(ctx, `
		WITH due AS (
			SELECT d.id FROM webhook_deliveries d
			JOIN assistant_webhooks w ON w.id = d.webhook_id AND w.removed_at IS NULL
			WHERE d.state = 'pending' AND d.next_attempt_at <= $1 AND (d.lease_until IS NULL OR d.lease_until <= $1)
			  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p
				WHERE p.webhook_id = d.webhook_id AND p.invocation_id = d.invocation_id
				  AND p.event_id < d.event_id AND p.state = 'pending')
			ORDER BY d.event_id
			LIMIT $4
			FOR UPDATE OF d SKIP LOCKED)
		UPDATE webhook_deliveries d SET lease_token = $3, lease_until = $2, attempts = d.attempts + 1
		FROM due, assistant_webhooks w
		WHERE d.id = due.id AND w.id = d.webhook_id
		RETURNING `+deliveryColumns+`, w.url, w.secret`, now, leaseUntil, token, limit)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[ClaimedDelivery])
	if err != nil {
		return nil, fmt.Errorf("store.ClaimWebhookDeliveries: %w", err)
	}
	return out, nil
}

// FinishWebhookAttempt records an attempt of a delivery leased under token
// and sets where the delivery stands: state "delivered" or "failed" ends
// it; "pending" schedules the next attempt at next. ErrNotFound when the
// lease was lost (it expired and another worker took the delivery).
func (s *Store) FinishWebhookAttempt(ctx context.Context, token string, a WebhookAttempt, state string, next time.Time) error {
	err := s.InTx(ctx, func(t *Tx) error {
		tag, err := t.tx.Exec(ctx, `
			UPDATE webhook_deliveries SET state = $3, next_attempt_at = $4, lease_token = NULL, lease_until = NULL,
				finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE $5::timestamptz END
			WHERE id = $1 AND lease_token = $2`, a.DeliveryID, token, state, next, a.At)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return &NotFoundError{What: "leased delivery"}
		}
		_, err = t.tx.Exec(ctx, `INSERT INTO webhook_attempts (delivery_id, at, status, body, error) VALUES ($1, $2, $3, $4, $5)`,
			a.DeliveryID, a.At, a.Status, a.Body, a.Error)
		return err
	})
	if err != nil {
		return fmt.Errorf("store.FinishWebhookAttempt(%d): %w", a.DeliveryID, err)
	}
	return nil
}

// ListedDelivery is a delivery as the admin page lists it, with the
// endpoint it was made for: its URL, and when that endpoint was removed or
// replaced (nil while live). A delivery to a removed endpoint is never
// claimed or resent.
type ListedDelivery struct {
	WebhookDelivery
	URL       string     `db:"url"`
	RemovedAt *time.Time `db:"removed_at"`
}

// WebhookDeliveries lists an assistant's latest deliveries (to any of its
// endpoints, live or removed), newest first, each with its own endpoint.
func (s *Store) WebhookDeliveries(ctx context.Context, assistantID string, limit int) ([]ListedDelivery, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+deliveryColumns+`, w.url, w.removed_at FROM webhook_deliveries d
		JOIN assistant_webhooks w ON w.id = d.webhook_id
		WHERE w.assistant_id = $1 ORDER BY d.id DESC LIMIT $2`, assistantID, limit)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[ListedDelivery])
	if err != nil {
		return nil, fmt.Errorf("store.WebhookDeliveries(%s): %w", assistantID, err)
	}
	return out, nil
}

// WebhookAttempts lists the attempts of the given deliveries, oldest first.
func (s *Store) WebhookAttempts(ctx context.Context, deliveryIDs []int64) ([]WebhookAttempt, error) {
	rows, _ := s.pool.Query(ctx, `SELECT id, delivery_id, at, status, body, error FROM webhook_attempts
		WHERE delivery_id = ANY($1) ORDER BY id`, deliveryIDs)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[WebhookAttempt])
	if err != nil {
		return nil, fmt.Errorf("store.WebhookAttempts: %w", err)
	}
	return out, nil
}

// ResendWebhookDelivery puts one of the assistant's deliveries back in the
// queue, due at now and retried until retryUntil, whatever became of it.
// ErrNotFound when the assistant has no such delivery to a live endpoint,
// or when a worker is sending it at this moment (resending then could send
// it twice at once).
func (s *Store) ResendWebhookDelivery(ctx context.Context, assistantID string, deliveryID int64, now, retryUntil time.Time) error {
	tag, err := s.pool.Exec(ctx, `
		UPDATE webhook_deliveries d SET state = 'pending', next_attempt_at = $3, retry_until = $4,
			lease_token = NULL, lease_until = NULL, finished_at = NULL
		FROM assistant_webhooks w
		WHERE d.id = $2 AND w.id = d.webhook_id AND w.assistant_id = $1 AND w.removed_at IS NULL
		  AND (d.lease_until IS NULL OR d.lease_until <= $3)`,
		assistantID, deliveryID, now, retryUntil)
	if err != nil {
		return fmt.Errorf("store.ResendWebhookDelivery(%d): %w", deliveryID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store.ResendWebhookDelivery(%d): %w", deliveryID, &NotFoundError{What: "delivery"})
	}
	return nil
}

// QueueWebhookTest records e (a person asking for a test delivery) and
// enqueues, in the same transaction, one delivery to the assistant's live
// endpoint of the body payload returns for e's id; it returns the
// delivery's id. The delivery's invocation_id is "test:<event id>", so a
// failing test holds up neither the next test nor any invocation's events.
// ErrNotFound when the assistant has no live endpoint.
func (s *Store) QueueWebhookTest(ctx context.Context, assistantID string, e Event, payload func(eventID int64) ([]byte, error),
	retryUntil time.Time) (int64, error) {
	var id int64
	err := s.InTx(ctx, func(t *Tx) error {
		var webhookID string
		if err := t.tx.QueryRow(ctx, `SELECT id FROM assistant_webhooks WHERE assistant_id = $1 AND removed_at IS NULL`,
			assistantID).Scan(&webhookID); err != nil {
			return notFound(err, "endpoint")
		}
		eventID, err := t.InsertEvent(ctx, e)
		if err != nil {
			return err
		}
		body, err := payload(eventID)
		if err != nil {
			return err
		}
		return t.tx.QueryRow(ctx, `
			INSERT INTO webhook_deliveries (webhook_id, event_id, event, invocation_id, payload, created_at, retry_until, next_attempt_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $6) RETURNING id`,
			webhookID, eventID, e.Action, "test:"+strconv.FormatInt(eventID, 10), json.RawMessage(body), e.At, retryUntil).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("store.QueueWebhookTest(%s): %w", assistantID, err)
	}
	return id, nil
}
