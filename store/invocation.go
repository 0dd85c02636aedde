package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Invocation is a row of the journal.
type Invocation struct {
	ID                  string          `db:"id"`
	TaskID              string          `db:"task_id"`
	ConversationID      string          `db:"conversation_id"`
	System              string          `db:"system"`
	Action              string          `db:"action"`
	TargetKind          string          `db:"target_kind"`
	TargetID            string          `db:"target_id"`
	TargetDisplay       string          `db:"target_display"`
	TargetVersion       string          `db:"target_version"`
	State               string          `db:"state"`
	Version             int32           `db:"version"`
	ProposedArgs        json.RawMessage `db:"proposed_args"`
	ApprovedArgs        json.RawMessage `db:"approved_args"`
	EffectiveArgs       json.RawMessage `db:"effective_args"`
	ArgsHash            []byte          `db:"args_hash"`
	ApprovedArgsHash    []byte          `db:"approved_args_hash"`
	Quote               json.RawMessage `db:"quote"`
	Summary             string          `db:"summary"`
	SummaryDisagrees    bool            `db:"summary_disagrees"`
	IdempotencyKey      string          `db:"idempotency_key"`
	ClientKey           *string         `db:"client_key"`
	AmountCents         *int64          `db:"amount_cents"`
	PolicyStage         int16           `db:"policy_stage"`
	PolicyVersion       int32           `db:"policy_version"`
	RouteReason         string          `db:"route_reason"`
	DeadlineAt          *time.Time      `db:"deadline_at"`
	ApprovedAt          *time.Time      `db:"approved_at"`
	PermitAt            *time.Time      `db:"permit_at"`
	LeaseUntil          *time.Time      `db:"lease_until"`
	FinishedAt          *time.Time      `db:"finished_at"`
	Result              json.RawMessage `db:"result"`
	Error               json.RawMessage `db:"error"`
	Verification        json.RawMessage `db:"verification"`
	NotDispatchedReason *string         `db:"not_dispatched_reason"`
	DecisionReason      *string         `db:"decision_reason"`
	CompensatesID       *string         `db:"compensates_id"`
	SupersedesID        *string         `db:"supersedes_id"`
	// ExposureCents is what moved or was pending on the same customer or
	// target and action before this invocation when it was last routed.
	ExposureCents int64     `db:"exposure_cents"`
	CreatedAt     time.Time `db:"created_at"`
	UpdatedAt     time.Time `db:"updated_at"`
}

const invocationColumns = `id, task_id, conversation_id, system, action, target_kind, target_id, target_display,
	target_version, state, version, proposed_args, approved_args, effective_args, args_hash, approved_args_hash, quote,
	summary, summary_disagrees, idempotency_key, client_key, amount_cents, policy_stage, policy_version, route_reason,
	deadline_at, approved_at, permit_at, lease_until, finished_at, result, error, verification, not_dispatched_reason,
	decision_reason, compensates_id, supersedes_id, exposure_cents, created_at, updated_at`

// InsertInvocation writes a new journal row. It carries its task's
// customer (customer_ref), which exposure sums by, and counts a proposal
// (not a re-quote's successor) in its task's proposals_made.
func (t *Tx) InsertInvocation(ctx context.Context, in Invocation) (Invocation, error) {
	rows, _ := t.tx.Query(ctx, `
		WITH counted AS (
			UPDATE tasks SET proposals_made = proposals_made + 1 WHERE id = $2 AND $27::text IS NULL
		)
		INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id, target_display,
			target_version, state, proposed_args, approved_args, args_hash, approved_args_hash, quote, summary,
			summary_disagrees, idempotency_key, client_key, amount_cents, policy_stage, policy_version, route_reason,
			deadline_at, approved_at, compensates_id, supersedes_id, created_at, updated_at, customer_ref, exposure_cents)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
			$23, $24, $25, $26, $27, $28, $28, (SELECT customer_ref FROM tasks WHERE id = $2), $29)
		RETURNING `+invocationColumns,
		in.ID, in.TaskID, in.ConversationID, in.System, in.Action, in.TargetKind, in.TargetID, in.TargetDisplay,
		in.TargetVersion, in.State, in.ProposedArgs, in.ApprovedArgs, in.ArgsHash, in.ApprovedArgsHash, in.Quote,
		in.Summary, in.SummaryDisagrees, in.IdempotencyKey, in.ClientKey, in.AmountCents, in.PolicyStage,
		in.PolicyVersion, in.RouteReason, in.DeadlineAt, in.ApprovedAt, in.CompensatesID, in.SupersedesID, in.CreatedAt,
		in.ExposureCents)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Invocation])
	if isUniqueViolation(err) {
		return Invocation{}, fmt.Errorf("store.InsertInvocation: %w", ErrConflict)
	}
	if err != nil {
		return Invocation{}, fmt.Errorf("store.InsertInvocation: %w", err)
	}
	return out, nil
}

// Invocation loads a journal row.
func (s *Store) Invocation(ctx context.Context, id string) (Invocation, error) {
	return invocation(ctx, s.pool, `id = $1`, id)
}

// Invocation loads a journal row inside a transaction.
func (t *Tx) Invocation(ctx context.Context, id string) (Invocation, error) {
	return invocation(ctx, t.tx, `id = $1`, id)
}

// invocationByClientKey finds the invocation a caller's Idempotency-Key
// made in a task.
func (t *Tx) invocationByClientKey(ctx context.Context, taskID, key string) (Invocation, error) {
	return invocation(ctx, t.tx, `task_id = $1 AND client_key = $2`, taskID, key)
}

// DuplicateQuery names a proposal whose earlier twin RecentDuplicate looks
// for: the same action with the same arguments (ArgsHash) of one system in
// one conversation, created at or after Since. With a business key (KeyName
// set), an invocation of the same action in any system whose target
// has the same key, and whose arguments but the target's (TargetParam) are
// Args', is the same request too.
type DuplicateQuery struct {
	ConversationID, System, Action string
	ArgsHash                       []byte
	KeyName, KeyValue              string
	TargetParam                    string
	// Args is the proposal's arguments as resolved (canonical JSON).
	Args       []byte
	Since, Now time.Time
}

func (q DuplicateQuery) params() []any {
	return []any{q.ConversationID, q.System, q.Action, q.ArgsHash, q.Since, q.Now, q.KeyName, q.KeyValue, q.TargetParam, string(q.Args)}
}

// RecentDuplicate finds the newest invocation of the same action with the
// same arguments in the same conversation created at or after since that is
// live or completed: whichever of the conversation's tasks it came through
// (a conversation belongs to one assistant), a new task is not a new
// request, nor is another system that reaches the same business object.
// One that ended with no effect (failed, rejected, expired, not
// dispatched) or was reversed does not hold a new proposal back, nor does
// one not yet sent whose task can no longer send it (cancelled, closed or
// past its expiry at now).
func (t *Tx) RecentDuplicate(ctx context.Context, q DuplicateQuery) (Invocation, error) {
	return invocation(ctx, t.tx, recentDuplicate, q.params()...)
}

// RecentDuplicate is Tx.RecentDuplicate outside a transaction: one round
// trip for a look that decides nothing by itself (the insert looks again
// under its lock).
func (s *Store) RecentDuplicate(ctx context.Context, q DuplicateQuery) (Invocation, error) {
	return invocation(ctx, s.pool, recentDuplicate, q.params()...)
}

const recentDuplicate = `conversation_id = $1 AND action = $3 AND created_at >= $5
	AND (system = $2 AND args_hash = $4
		OR ` + businessKeyName + ` = $7 AND ` + businessKeyValue + ` = $8 AND proposed_args - $9::text = $10::jsonb - $9::text)
	AND (state IN ('dispatching', 'unverified', 'completed')
		OR (state IN ('proposed', 'awaiting_confirmation', 'awaiting_approval', 'approved') AND EXISTS (
			SELECT 1 FROM tasks t WHERE t.id = invocations.task_id AND t.state IN ('active', 'paused') AND t.expires_at > $6)))
	ORDER BY created_at DESC LIMIT 1`

// LiveCompensation finds the newest compensation of an invocation that may
// still take effect: anything but failed, rejected, expired or not
// dispatched.
func (t *Tx) LiveCompensation(ctx context.Context, originalID string) (Invocation, error) {
	return invocation(ctx, t.tx, `compensates_id = $1
		AND state NOT IN ('failed', 'rejected', 'expired', 'not_dispatched') ORDER BY created_at DESC LIMIT 1`, originalID)
}

func invocation(ctx context.Context, db dbtx, where string, args ...any) (Invocation, error) {
	rows, _ := db.Query(ctx, `SELECT `+invocationColumns+` FROM invocations WHERE `+where, args...)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Invocation])
	if err != nil {
		return Invocation{}, fmt.Errorf("store: invocation: %w", notFound(err, "invocation"))
	}
	return out, nil
}

// InvocationsForTask lists a task's invocations, oldest first.
func (s *Store) InvocationsForTask(ctx context.Context, taskID string) ([]Invocation, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+invocationColumns+` FROM invocations WHERE task_id = $1 ORDER BY created_at, id`, taskID)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Invocation])
	if err != nil {
		return nil, fmt.Errorf("store.InvocationsForTask: %w", err)
	}
	return out, nil
}

// InvocationChange is what a transition sets besides state and version;
// nil fields are left alone.
type InvocationChange struct {
	ApprovedArgs        json.RawMessage
	ApprovedArgsHash    []byte
	EffectiveArgs       json.RawMessage
	Quote               json.RawMessage
	TargetVersion       *string
	AmountCents         *int64
	DeadlineAt          *time.Time
	ApprovedAt          *time.Time
	PermitAt            *time.Time
	LeaseUntil          *time.Time
	LeaseToken          *string
	FinishedAt          *time.Time
	Result              json.RawMessage
	Error               json.RawMessage
	Verification        json.RawMessage
	NotDispatchedReason *string
	DecisionReason      *string
	// RouteReason, PolicyStage and PolicyVersion are set when a decision
	// re-routes the invocation under the policy in force.
	RouteReason   *string
	PolicyStage   *int16
	PolicyVersion *int32
	ExposureCents *int64
}

// TransitionInvocation moves an invocation to state in one guarded
// statement: it must be in one of from and, when expectedVersion is not 0,
// at that version. No row means an illegal or stale transition: ErrConflict.
func (t *Tx) TransitionInvocation(ctx context.Context, id string, from []string, expectedVersion int32, state string, at time.Time, ch InvocationChange) (Invocation, error) {
	return t.transitionInvocation(ctx, id, from, expectedVersion, nil, state, at, ch)
}

// TransitionHeldInvocation is TransitionInvocation for the worker that holds
// the invocation's dispatch lease: the row must also carry leaseToken, so a
// worker records an outcome only for a request it sent under its own lease.
// No row: ErrConflict.
func (t *Tx) TransitionHeldInvocation(ctx context.Context, id, leaseToken string, from []string, state string, at time.Time, ch InvocationChange) (Invocation, error) {
	return t.transitionInvocation(ctx, id, from, 0, &leaseToken, state, at, ch)
}

func (t *Tx) transitionInvocation(ctx context.Context, id string, from []string, expectedVersion int32, leaseToken *string, state string, at time.Time, ch InvocationChange) (Invocation, error) {
	set := []string{"state = $4", "version = version + 1", "updated_at = $5"}
	args := []any{id, from, expectedVersion, state, at}
	where := "id = $1 AND state = ANY($2) AND ($3 = 0 OR version = $3)"
	if leaseToken != nil {
		args = append(args, *leaseToken)
		where += " AND lease_token = $" + strconv.Itoa(len(args))
	}
	add := func(col string, v any) {
		args = append(args, v)
		set = append(set, col+" = $"+strconv.Itoa(len(args)))
	}
	if ch.ApprovedArgs != nil {
		add("approved_args", ch.ApprovedArgs)
	}
	if ch.ApprovedArgsHash != nil {
		add("approved_args_hash", ch.ApprovedArgsHash)
	}
	if ch.EffectiveArgs != nil {
		add("effective_args", ch.EffectiveArgs)
	}
	if ch.Quote != nil {
		add("quote", ch.Quote)
	}
	if ch.TargetVersion != nil {
		add("target_version", *ch.TargetVersion)
	}
	if ch.AmountCents != nil {
		add("amount_cents", *ch.AmountCents)
	}
	if ch.DeadlineAt != nil {
		add("deadline_at", *ch.DeadlineAt)
	}
	if ch.ApprovedAt != nil {
		add("approved_at", *ch.ApprovedAt)
	}
	if ch.PermitAt != nil {
		add("permit_at", *ch.PermitAt)
	}
	if ch.LeaseUntil != nil {
		add("lease_until", *ch.LeaseUntil)
	}
	if ch.LeaseToken != nil {
		add("lease_token", *ch.LeaseToken)
	}
	if ch.FinishedAt != nil {
		add("finished_at", *ch.FinishedAt)
	}
	if ch.Result != nil {
		add("result", ch.Result)
	}
	if ch.Error != nil {
		add("error", ch.Error)
	}
	if ch.Verification != nil {
		add("verification", ch.Verification)
	}
	if ch.NotDispatchedReason != nil {
		add("not_dispatched_reason", *ch.NotDispatchedReason)
	}
	if ch.DecisionReason != nil {
		add("decision_reason", *ch.DecisionReason)
	}
	if ch.RouteReason != nil {
		add("route_reason", *ch.RouteReason)
	}
	if ch.PolicyStage != nil {
		add("policy_stage", *ch.PolicyStage)
	}
	if ch.PolicyVersion != nil {
		add("policy_version", *ch.PolicyVersion)
	}
	if ch.ExposureCents != nil {
		add("exposure_cents", *ch.ExposureCents)
	}
	rows, _ := t.tx.Query(ctx, `UPDATE invocations SET `+strings.Join(set, ", ")+`
		WHERE `+where+`
		RETURNING `+invocationColumns, args...)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Invocation])
	if errors.Is(err, pgx.ErrNoRows) {
		return Invocation{}, fmt.Errorf("store.TransitionInvocation(%s → %s): %w", id, state, ErrConflict)
	}
	if err != nil {
		return Invocation{}, fmt.Errorf("store.TransitionInvocation(%s → %s): %w", id, state, err)
	}
	// Whoever waits for this invocation's outcome, in this or any other
	// console instance, hears of it once the change commits.
	return out, t.Notify(ctx, InvocationsChannel, id)
}

// ClaimApproved locks the oldest approved invocation that no other
// transaction holds (FOR UPDATE SKIP LOCKED), so several console instances
// share the queue without waiting on each other.
// Invocations in skip (deferred by their task's limits) are passed over.
func (t *Tx) ClaimApproved(ctx context.Context, skip []string) ([]Invocation, error) {
	if skip == nil {
		skip = []string{}
	}
	rows, _ := t.tx.Query(ctx, `SELECT `+invocationColumns+` FROM invocations
		WHERE state = 'approved' AND id <> ALL($1) ORDER BY approved_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`, skip)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Invocation])
	if err != nil {
		return nil, fmt.Errorf("store.ClaimApproved: %w", err)
	}
	return out, nil
}

// ClaimApprovedByID locks one invocation if it is approved and free.
func (t *Tx) ClaimApprovedByID(ctx context.Context, id string) ([]Invocation, error) {
	rows, _ := t.tx.Query(ctx, `SELECT `+invocationColumns+` FROM invocations
		WHERE id = $1 AND state = 'approved' FOR UPDATE SKIP LOCKED`, id)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Invocation])
	if err != nil {
		return nil, fmt.Errorf("store.ClaimApprovedByID: %w", err)
	}
	return out, nil
}

// ExpiredLeases lists invocations still dispatching after their lease ran
// out: whoever sent them died or lost track; their outcome is unknown.
func (s *Store) ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]Invocation, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+invocationColumns+` FROM invocations
		WHERE state = 'dispatching' AND lease_until < $1 ORDER BY lease_until LIMIT $2`, now, limit)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Invocation])
	if err != nil {
		return nil, fmt.Errorf("store.ExpiredLeases: %w", err)
	}
	return out, nil
}

// PastDeadline lists invocations awaiting a decision after their deadline.
// The sweep runs once an interval and is planned at each run (exec mode):
// a plan cached while the table was nearly empty scanned all of it later.
func (s *Store) PastDeadline(ctx context.Context, now time.Time, limit int) ([]Invocation, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+invocationColumns+` FROM invocations
		WHERE state IN ('awaiting_confirmation', 'awaiting_approval') AND deadline_at < $1
		ORDER BY deadline_at LIMIT $2`, pgx.QueryExecModeExec, now, limit)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Invocation])
	if err != nil {
		return nil, fmt.Errorf("store.PastDeadline: %w", err)
	}
	return out, nil
}

// LockApprovedOfTask locks the task's approved invocations that no other
// transaction holds and returns their ids.
func (t *Tx) LockApprovedOfTask(ctx context.Context, taskID string) ([]string, error) {
	rows, _ := t.tx.Query(ctx, `SELECT id FROM invocations WHERE task_id = $1 AND state = 'approved'
		ORDER BY id FOR UPDATE SKIP LOCKED`, taskID)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store.LockApprovedOfTask: %w", err)
	}
	return ids, nil
}
