package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Assistant is a row of assistants: a program that calls the API and the
// MCP server with bearer keys.
type Assistant struct {
	ID         string     `db:"id"`
	Name       string     `db:"name"`
	CreatedBy  *int64     `db:"created_by"`
	CreatedAt  time.Time  `db:"created_at"`
	DisabledAt *time.Time `db:"disabled_at"`
	// MaxWriteBudget, MaxInflightLimit and MaxRatePerMinute bound the
	// limits of the tasks it opens.
	MaxWriteBudget   int32 `db:"max_write_budget"`
	MaxInflightLimit int32 `db:"max_inflight_limit"`
	MaxRatePerMinute int32 `db:"max_rate_per_minute"`
	// AnyCustomer lets it open tasks without the business vouching for the
	// customer (a staff-facing assistant).
	AnyCustomer bool `db:"any_customer"`
	// ReportsWithoutTask lets its conversation events count in the
	// metrics without a vouched task of its own in the conversation.
	ReportsWithoutTask bool `db:"reports_without_task"`
}

// APIKey is a row of api_keys. Only the SHA-256 of the secret is stored.
type APIKey struct {
	ID          string     `db:"id"`
	AssistantID string     `db:"assistant_id"`
	Prefix      string     `db:"prefix"`
	Hash        []byte     `db:"hash"`
	CreatedBy   *int64     `db:"created_by"`
	CreatedAt   time.Time  `db:"created_at"`
	LastUsedAt  *time.Time `db:"last_used_at"`
	RevokedAt   *time.Time `db:"revoked_at"`
}

// AssistantAction is a row of assistant_actions: whether an assistant has
// an action of a system turned on.
type AssistantAction struct {
	AssistantID string `db:"assistant_id"`
	System      string `db:"system"`
	Action      string `db:"action"`
	Enabled     bool   `db:"enabled"`
}

// ConversationEvent is a row of conversation_events: what an assistant did
// with one request of a conversation.
type ConversationEvent struct {
	ID             int64     `db:"id"`
	ConversationID string    `db:"conversation_id"`
	AssistantID    string    `db:"assistant_id"`
	TaskID         *string   `db:"task_id"`
	Intent         string    `db:"intent"`
	Mode           string    `db:"mode"`
	At             time.Time `db:"at"`
	Data           []byte    `db:"data"`
}

const assistantColumns = `id, name, created_by, created_at, disabled_at, max_write_budget, max_inflight_limit,
	max_rate_per_minute, any_customer, reports_without_task`

const apiKeyColumns = `id, assistant_id, prefix, hash, created_by, created_at, last_used_at, revoked_at`

// InsertAssistant adds an assistant; a name already taken (case-insensitive)
// is ErrConflict.
func (s *Store) InsertAssistant(ctx context.Context, a Assistant) (Assistant, error) {
	rows, _ := s.pool.Query(ctx, `INSERT INTO assistants (id, name, created_by, created_at) VALUES ($1, $2, $3, $4)
		RETURNING `+assistantColumns, a.ID, a.Name, a.CreatedBy, a.CreatedAt)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Assistant])
	if isUniqueViolation(err) {
		return Assistant{}, fmt.Errorf("store.InsertAssistant(%q): %w", a.Name, ErrConflict)
	}
	if err != nil {
		return Assistant{}, fmt.Errorf("store.InsertAssistant(%q): %w", a.Name, err)
	}
	return out, nil
}

// Assistants lists every assistant by name.
func (s *Store) Assistants(ctx context.Context) ([]Assistant, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+assistantColumns+` FROM assistants ORDER BY lower(name)`)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Assistant])
	if err != nil {
		return nil, fmt.Errorf("store.Assistants: %w", err)
	}
	return out, nil
}

// Assistant returns one assistant, or ErrNotFound.
func (s *Store) Assistant(ctx context.Context, id string) (Assistant, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+assistantColumns+` FROM assistants WHERE id = $1`, id)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Assistant])
	if err != nil {
		return Assistant{}, fmt.Errorf("store.Assistant(%q): %w", id, notFound(err, "assistant"))
	}
	return out, nil
}

// AssistantByName returns the assistant of that name (case-insensitive),
// or ErrNotFound.
func (s *Store) AssistantByName(ctx context.Context, name string) (Assistant, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+assistantColumns+` FROM assistants WHERE lower(name) = lower($1)`, name)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Assistant])
	if err != nil {
		return Assistant{}, fmt.Errorf("store.AssistantByName(%q): %w", name, notFound(err, "assistant"))
	}
	return out, nil
}

// SetAssistantDisabled disables an assistant at a time, or enables it with
// nil; ErrNotFound when there is no such assistant.
func (s *Store) SetAssistantDisabled(ctx context.Context, id string, at *time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE assistants SET disabled_at = $2 WHERE id = $1`, id, at)
	if err != nil {
		return fmt.Errorf("store.SetAssistantDisabled(%q): %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store.SetAssistantDisabled(%q): %w", id, &NotFoundError{What: "assistant"})
	}
	return nil
}

// InsertAPIKey stores a key's hash; a hash already stored is ErrConflict.
func (s *Store) InsertAPIKey(ctx context.Context, k APIKey) (APIKey, error) {
	rows, _ := s.pool.Query(ctx, `INSERT INTO api_keys (id, assistant_id, prefix, hash, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+apiKeyColumns, k.ID, k.AssistantID, k.Prefix, k.Hash, k.CreatedBy, k.CreatedAt)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[APIKey])
	if isUniqueViolation(err) {
		return APIKey{}, fmt.Errorf("store.InsertAPIKey: %w", ErrConflict)
	}
	if err != nil {
		return APIKey{}, fmt.Errorf("store.InsertAPIKey: %w", err)
	}
	return out, nil
}

// APIKeys lists every key, newest first.
func (s *Store) APIKeys(ctx context.Context) ([]APIKey, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+apiKeyColumns+` FROM api_keys ORDER BY created_at DESC, id`)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[APIKey])
	if err != nil {
		return nil, fmt.Errorf("store.APIKeys: %w", err)
	}
	return out, nil
}

// APIKeyByHash finds a key by the SHA-256 of its secret, revoked or not,
// or ErrNotFound.
func (s *Store) APIKeyByHash(ctx context.Context, hash []byte) (APIKey, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE hash = $1`, hash)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[APIKey])
	if err != nil {
		return APIKey{}, fmt.Errorf("store.APIKeyByHash: %w", notFound(err, "API key"))
	}
	return out, nil
}

// TouchAPIKey records a key's use at most once a minute: the row is left
// alone when it was last touched less than a minute before at.
func (s *Store) TouchAPIKey(ctx context.Context, id string, at time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $2::timestamptz - interval '1 minute')`, id, at)
	if err != nil {
		return fmt.Errorf("store.TouchAPIKey(%q): %w", id, err)
	}
	return nil
}

// RevokeAPIKey revokes a key that is not revoked yet; ErrNotFound when no
// such live key exists.
func (s *Store) RevokeAPIKey(ctx context.Context, id string, at time.Time) (APIKey, error) {
	rows, _ := s.pool.Query(ctx, `UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL
		RETURNING `+apiKeyColumns, id, at)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[APIKey])
	if err != nil {
		return APIKey{}, fmt.Errorf("store.RevokeAPIKey(%q): %w", id, notFound(err, "live key"))
	}
	return out, nil
}

// OpenTaskCount is how many of the assistant's tasks are still open at now
// (active or paused and not expired): what a revoked key or a disabled
// assistant leaves without a caller.
func (s *Store) OpenTaskCount(ctx context.Context, assistantID string, now time.Time) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM tasks WHERE assistant_id = $1 AND state IN ('active', 'paused')
		AND expires_at > $2`, assistantID, now).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store.OpenTaskCount(%q): %w", assistantID, err)
	}
	return n, nil
}

// AssistantActions lists the action switches of an assistant (all
// assistants when assistantID is empty).
func (s *Store) AssistantActions(ctx context.Context, assistantID string) ([]AssistantAction, error) {
	rows, _ := s.pool.Query(ctx, `SELECT assistant_id, system, action, enabled FROM assistant_actions
		WHERE $1 = '' OR assistant_id = $1 ORDER BY assistant_id, system, action`, assistantID)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[AssistantAction])
	if err != nil {
		return nil, fmt.Errorf("store.AssistantActions(%q): %w", assistantID, err)
	}
	return out, nil
}

// SetAssistantAction turns one action of a system on or off for an
// assistant.
func (s *Store) SetAssistantAction(ctx context.Context, a AssistantAction) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO assistant_actions (assistant_id, system, action, enabled) VALUES ($1, $2, $3, $4)
		ON CONFLICT (assistant_id, system, action) DO UPDATE SET enabled = EXCLUDED.enabled`,
		a.AssistantID, a.System, a.Action, a.Enabled)
	if err != nil {
		return fmt.Errorf("store.SetAssistantAction(%q, %s/%s): %w", a.AssistantID, a.System, a.Action, err)
	}
	return nil
}

// InsertConversationEvent appends what an assistant did with a request.
func (s *Store) InsertConversationEvent(ctx context.Context, e ConversationEvent) (ConversationEvent, error) {
	return insertConversationEvent(ctx, s.pool, e)
}

// InsertConversationEvent is Store.InsertConversationEvent in the
// transaction (a hand-off, under LockHandoffOpening).
func (t *Tx) InsertConversationEvent(ctx context.Context, e ConversationEvent) (ConversationEvent, error) {
	return insertConversationEvent(ctx, t.tx, e)
}

func insertConversationEvent(ctx context.Context, db dbtx, e ConversationEvent) (ConversationEvent, error) {
	if e.Data == nil {
		e.Data = []byte("{}")
	}
	rows, _ := db.Query(ctx, `INSERT INTO conversation_events (conversation_id, assistant_id, task_id, intent, mode, at, data)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		RETURNING id, conversation_id, assistant_id, task_id, intent, mode, at, data`,
		e.ConversationID, e.AssistantID, e.TaskID, e.Intent, e.Mode, e.At, e.Data)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ConversationEvent])
	if err != nil {
		return ConversationEvent{}, fmt.Errorf("store.InsertConversationEvent(%q): %w", e.ConversationID, err)
	}
	return out, nil
}
