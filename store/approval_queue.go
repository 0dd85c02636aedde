package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// QueueFilter selects cards of the approval queue. Zero values select
// everything; After continues a page (keyset, never OFFSET).
type QueueFilter struct {
	System      string
	Action      string
	CustomerRef string // prefix match on the task's customer
	MinCents    *int64
	MaxCents    *int64
	// OlderThan keeps invocations proposed before now minus this duration.
	OlderThan time.Duration
	// ClaimedBy keeps cards held (unexpired) by this user; 0 means anyone.
	ClaimedBy int64
	// Now is the moment OlderThan and a hold's expiry are measured from
	// (the lists set it from their clock).
	Now time.Time
	// After is the last card of the previous page: the next page starts
	// strictly after (deadline_at, id) in the queue's order.
	After *QueueCursor
	Limit int
}

// QueueCursor is a position in the queue: the (deadline, id) of a card.
type QueueCursor struct {
	DeadlineAt time.Time
	ID         string
}

// QueueItem is one card of the approval queue: the invocation, its task's
// headroom, who holds the card and when its quote was made.
type QueueItem struct {
	Invocation
	CustomerRef      string     `db:"customer_ref"`
	TaskState        string     `db:"task_state"`
	WriteBudget      int32      `db:"write_budget"`
	WritesUsed       int32      `db:"writes_used"`
	InflightLimit    int32      `db:"inflight_limit"`
	Inflight         int32      `db:"inflight"`
	HolderID         *int64     `db:"holder_id"`
	HolderName       *string    `db:"holder_name"`
	HoldUntil        *time.Time `db:"hold_until"`
	FirstApproverIDs []int64    `db:"first_approver_ids"`
	// QuotedAt is when the shown quote was made: the proposal's dry-run,
	// or the last agent edit's.
	QuotedAt time.Time `db:"quoted_at"`
}

// queueWhere is the filter of the approval queue (without the page's
// cursor), to follow "FROM invocations i": the joins its conditions need
// (tasks for the customer, approval_claims for the holder) and a WHERE of
// only the conditions the filter sets, their arguments appended to args. Each shape of filter is a statement of
// its own, so the plan PostgreSQL caches for it after five executions
// (its generic plan) is the plan of that shape: never a placeholder such
// as "$5 = ” OR …" that hides which conditions apply and lets the cached
// plan read every pending row.
func queueWhere(f QueueFilter, args *[]any) string {
	arg := func(v any) string { return queueArg(args, v) }
	var joins string
	where := `
		WHERE i.state = 'awaiting_approval'`
	if f.CustomerRef != "" {
		joins += `
			JOIN tasks t ON t.id = i.task_id`
		where += ` AND t.customer_ref ILIKE ` + arg(f.CustomerRef) + ` || '%'`
	}
	if f.ClaimedBy != 0 {
		joins += `
			JOIN approval_claims c ON c.invocation_id = i.id AND c.expires_at > ` + arg(f.Now)
		where += ` AND c.user_id = ` + arg(f.ClaimedBy)
	}
	if f.System != "" {
		where += ` AND i.system = ` + arg(f.System)
	}
	if f.Action != "" {
		where += ` AND i.action = ` + arg(f.Action)
	}
	if f.MinCents != nil {
		where += ` AND i.amount_cents >= ` + arg(*f.MinCents)
	}
	if f.MaxCents != nil {
		where += ` AND i.amount_cents <= ` + arg(*f.MaxCents)
	}
	if f.OlderThan > 0 {
		where += ` AND i.created_at < ` + arg(f.Now.Add(-f.OlderThan))
	}
	return joins + where
}

// queueArgs are a queue statement's arguments, led by how it runs. The
// unfiltered queue (every page of it) runs as a cached statement: its
// generic plan reads the queue's index in order and stops at the page.
// A filtered one is planned for its values each time (pgx's exec mode, an
// unnamed statement): how many pending rows an amount range or a
// customer's prefix keeps decides between reading the index in order and
// sorting what matches, and a cached plan cannot know it.
func queueArgs(f QueueFilter, args []any) []any {
	if f.System == "" && f.Action == "" && f.CustomerRef == "" && f.MinCents == nil && f.MaxCents == nil && f.OlderThan <= 0 &&
		f.ClaimedBy == 0 {
		return args
	}
	return append([]any{pgx.QueryExecModeExec}, args...)
}

// ApprovalQueue lists invocations awaiting approval, soonest deadline
// first, one page at a time. The page is chosen first, reading only the
// partial index invocations_approval_queue in order (backwards, index
// only) and stopping after Limit rows; only then are the page's cards
// joined to their tasks, holders, approvals and edits. So a page costs the
// same with a hundred or a hundred thousand pending, in the plan a
// connection caches as well as in the first. It takes no row locks.
func (s *Store) ApprovalQueue(ctx context.Context, f QueueFilter) ([]QueueItem, error) {
	if f.Limit <= 0 || f.Limit > 100 {
		f.Limit = 25
	}
	args := []any{f.Now}
	where := queueWhere(f, &args)
	if f.After != nil {
		where += ` AND (i.deadline_at, i.id) > (` + queueArg(&args, f.After.DeadlineAt) + `, ` + queueArg(&args, f.After.ID) + `)`
	}
	// The limit is written into the statement: a placeholder would leave
	// the cached plan guessing how many rows the page takes.
	limit := strconv.Itoa(f.Limit)
	rows, _ := s.pool.Query(ctx, queueSelect()+`
		FROM (SELECT i.id FROM invocations i`+where+`
			ORDER BY i.deadline_at ASC, i.id ASC
			LIMIT `+limit+`) page
		JOIN invocations i ON i.id = page.id`+queueJoins("$1")+`
		ORDER BY i.deadline_at ASC, i.id ASC`, queueArgs(f, args)...)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[QueueItem])
	if err != nil {
		return nil, fmt.Errorf("store.ApprovalQueue: %w", err)
	}
	return out, nil
}

// queueArg appends v to a statement's arguments and returns its
// placeholder.
func queueArg(args *[]any, v any) string {
	*args = append(*args, v)
	return "$" + strconv.Itoa(len(*args))
}

// CountQueue counts the cards the queue shows with this filter (After and
// Limit are ignored), up to PendingCountCap.
func (s *Store) CountQueue(ctx context.Context, f QueueFilter) (int, error) {
	var args []any
	where := queueWhere(f, &args)
	var n int
	err := s.pool.QueryRow(ctx, `
		SELECT count(*) FROM (SELECT 1 FROM invocations i`+where+`
			ORDER BY i.deadline_at, i.id
			LIMIT `+pendingCap+`) q`, queueArgs(f, args)...).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store.CountQueue: %w", err)
	}
	return n, nil
}

// TargetChange is a write on the same object as a queue card that
// happened (or began) after the card's quote was made: the quote may no
// longer be true.
type TargetChange struct {
	CardID      string     `db:"card_id"`
	ID          string     `db:"id"`
	Action      string     `db:"action"`
	State       string     `db:"state"`
	Title       string     `db:"title"`
	AmountCents *int64     `db:"amount_cents"`
	Currency    string     `db:"currency"`
	At          time.Time  `db:"at"`
	FinishedAt  *time.Time `db:"finished_at"`
}

// TargetChanges lists, for the given cards, the other invocations on the
// same object (system and target id) that completed, are being sent or
// whose outcome is unknown, and moved after the card's quote was made.
// The index invocations_target keeps it a handful of lookups per card,
// however many invocations are stored.
func (s *Store) TargetChanges(ctx context.Context, cardIDs []string) ([]TargetChange, error) {
	if len(cardIDs) == 0 {
		return nil, nil
	}
	rows, _ := s.pool.Query(ctx, `
		SELECT i.id AS card_id, o.id, o.action, o.state, COALESCE(o.quote->>'title', '') AS title, o.amount_cents,
			COALESCE(o.quote->>'currency', '') AS currency, COALESCE(o.finished_at, o.permit_at, o.updated_at) AS at, o.finished_at
		FROM invocations i
		JOIN invocations o ON o.system = i.system AND o.target_id = i.target_id AND o.target_kind = i.target_kind AND o.id <> i.id
		WHERE i.id = ANY($1)
		  AND o.state IN ('dispatching', 'completed', 'unverified')
		  AND COALESCE(o.finished_at, o.permit_at, o.updated_at) > `+quotedAt+`
		ORDER BY i.id, at`, cardIDs)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[TargetChange])
	if err != nil {
		return nil, fmt.Errorf("store.TargetChanges: %w", err)
	}
	return out, nil
}

// quotedAt is when invocation i's quote was made: its last edit (which
// re-quotes), else its proposal.
const quotedAt = `COALESCE((SELECT max(e.at) FROM events e WHERE e.invocation_id = i.id AND e.action = 'invocation.edited'), i.created_at)`

// queueSelect is what a queue card needs of invocation i, its task t,
// its live claim c and the claim's holder u: the invocation, its task's
// headroom, who holds it, the first approvers so far and when its quote
// was made. queueJoins joins t, c and u to i.
func queueSelect() string {
	return `
		SELECT ` + prefixed("i", invocationColumns) + `, t.customer_ref, t.state AS task_state, t.write_budget, t.writes_used,
			t.inflight_limit,
			(SELECT count(*)::int FROM invocations d WHERE d.task_id = t.id AND d.state = 'dispatching') AS inflight,
			c.user_id AS holder_id, u.name AS holder_name, c.expires_at AS hold_until,
			COALESCE((SELECT array_agg(a.user_id ORDER BY a.at) FROM invocation_approvals a WHERE a.invocation_id = i.id),
				'{}') AS first_approver_ids,
			` + quotedAt + ` AS quoted_at`
}

// queueJoins joins a card's task and its claim, if it lives past the
// parameter now.
func queueJoins(now string) string {
	return `
		JOIN tasks t ON t.id = i.task_id
		LEFT JOIN approval_claims c ON c.invocation_id = i.id AND c.expires_at > ` + now + `
		LEFT JOIN users u ON u.id = c.user_id`
}

// QueueItem loads one card of the queue, whatever its state now.
func (s *Store) QueueItem(ctx context.Context, id string, now time.Time) (QueueItem, error) {
	rows, _ := s.pool.Query(ctx, queueSelect()+`
		FROM invocations i`+queueJoins("$2")+`
		WHERE i.id = $1`, id, now)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[QueueItem])
	if err != nil {
		return QueueItem{}, fmt.Errorf("store.QueueItem(%s): %w", id, notFound(err, "request"))
	}
	return out, nil
}

// PendingCountCap bounds CountPending: the badge says "1000+" beyond it,
// and every page stays as cheap with 100,000 pending as with 100.
const PendingCountCap = 1000

// pendingCap is PendingCountCap as the capped counts write it into their
// statements: with a placeholder for the limit, the plan a connection
// caches guesses the count reads a tenth of the table and scans the heap
// for it (a million settled rows before the first pending one).
const pendingCap = "1000"

// CountPending counts invocations awaiting approval and unverified ones,
// each up to PendingCountCap, for the console header's badge. Each count
// reads a partial index only (invocations_awaiting_created,
// invocations_open): its order is the index's, so no plan can prefer the
// heap.
func (s *Store) CountPending(ctx context.Context) (awaitingApproval, unverified int, err error) {
	err = s.pool.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM (SELECT 1 FROM invocations WHERE state = 'awaiting_approval'
		            ORDER BY created_at LIMIT `+pendingCap+`) a),
		       (SELECT count(*) FROM (SELECT 1 FROM invocations WHERE state = 'unverified'
		            ORDER BY deadline_at LIMIT `+pendingCap+`) u)`).Scan(&awaitingApproval, &unverified)
	if err != nil {
		return 0, 0, fmt.Errorf("store.CountPending: %w", err)
	}
	return awaitingApproval, unverified, nil
}

// Claim is who holds a card of the approval queue, and until when.
type Claim struct {
	InvocationID string    `db:"invocation_id"`
	UserID       int64     `db:"user_id"`
	ClaimedAt    time.Time `db:"claimed_at"`
	ExpiresAt    time.Time `db:"expires_at"`
}

// ClaimCard gives userID the card until until, when it is free, expired or
// already theirs, and returns the claim in force afterwards: another
// agent's unexpired claim comes back unchanged, so the caller can name the
// holder. A missing invocation is ErrNotFound.
func (s *Store) ClaimCard(ctx context.Context, invocationID string, userID int64, now, until time.Time) (Claim, error) {
	rows, _ := s.pool.Query(ctx, `
		WITH taken AS (
			INSERT INTO approval_claims (invocation_id, user_id, claimed_at, expires_at)
			SELECT id, $2, $3, $4 FROM invocations WHERE id = $1
			ON CONFLICT (invocation_id) DO UPDATE SET user_id = EXCLUDED.user_id,
				claimed_at = CASE WHEN approval_claims.user_id = EXCLUDED.user_id THEN approval_claims.claimed_at ELSE EXCLUDED.claimed_at END,
				expires_at = EXCLUDED.expires_at
			WHERE approval_claims.user_id = EXCLUDED.user_id OR approval_claims.expires_at <= $3
			RETURNING invocation_id, user_id, claimed_at, expires_at
		)
		SELECT invocation_id, user_id, claimed_at, expires_at FROM taken
		UNION ALL
		SELECT invocation_id, user_id, claimed_at, expires_at FROM approval_claims
		WHERE invocation_id = $1 AND NOT EXISTS (SELECT 1 FROM taken)`, invocationID, userID, now, until)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Claim])
	if err != nil {
		return Claim{}, fmt.Errorf("store.ClaimCard(%s): %w", invocationID, err)
	}
	if len(out) == 0 {
		return Claim{}, fmt.Errorf("store.ClaimCard(%s): %w", invocationID, &NotFoundError{What: "request"})
	}
	return out[0], nil
}

// ReleaseCard lets go of userID's claim on a card, if they hold it.
func (s *Store) ReleaseCard(ctx context.Context, invocationID string, userID int64) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM approval_claims WHERE invocation_id = $1 AND user_id = $2`, invocationID, userID); err != nil {
		return fmt.Errorf("store.ReleaseCard(%s): %w", invocationID, err)
	}
	return nil
}

func prefixed(alias, columns string) string {
	out := make([]byte, 0, len(columns)*2)
	start := true
	for i := 0; i < len(columns); i++ {
		ch := columns[i]
		if start && ch != ' ' && ch != '\t' && ch != '\n' {
			out = append(out, alias...)
			out = append(out, '.')
			start = false
		}
		out = append(out, ch)
		if ch == ',' {
			start = true
		}
	}
	return string(out)
}

// WaitingWork is what waits for a person across the console, for the home
// pages: each count up to PendingCountCap.
type WaitingWork struct {
	// AwaitingApproval is what the approval queue shows.
	AwaitingApproval int
	// SoonestDeadline is the deadline of the queue's first card.
	SoonestDeadline *time.Time
	// Unverified counts results nobody could confirm; UnverifiedItems are
	// the oldest of them.
	Unverified      int
	UnverifiedItems []UnverifiedItem
	// OpenHandoffs counts conversations handed to a person that nobody
	// has taken yet (uncapped, as the hand-off list counts them).
	OpenHandoffs int
}

// UnverifiedItem is one invocation whose outcome is unknown.
type UnverifiedItem struct {
	ID        string    `db:"id"`
	TaskID    string    `db:"task_id"`
	Title     string    `db:"title"`
	UpdatedAt time.Time `db:"updated_at"`
}

// WaitingWork counts what waits for a person and lists the oldest
// unverified results (up to listLimit).
func (s *Store) WaitingWork(ctx context.Context, listLimit int) (WaitingWork, error) {
	var w WaitingWork
	// The hand-offs are counted as the hand-off list counts them
	// (handoffGroups): conversations, not events.
	err := s.pool.QueryRow(ctx, handoffGroups+`
		SELECT (SELECT count(*) FROM (SELECT 1 FROM invocations WHERE state = 'awaiting_approval'
		            ORDER BY created_at LIMIT `+pendingCap+`) a),
		       (SELECT min(deadline_at) FROM invocations WHERE state = 'awaiting_approval'),
		       (SELECT count(*) FROM (SELECT 1 FROM invocations WHERE state = 'unverified'
		            ORDER BY deadline_at LIMIT `+pendingCap+`) u),
		       (SELECT count(*) FROM g WHERE taken_by IS NULL)`).Scan(&w.AwaitingApproval, &w.SoonestDeadline, &w.Unverified, &w.OpenHandoffs)
	if err != nil {
		return w, fmt.Errorf("store.WaitingWork: %w", err)
	}
	if w.Unverified == 0 || listLimit <= 0 {
		return w, nil
	}
	rows, _ := s.pool.Query(ctx, `
		SELECT id, task_id, COALESCE(quote->>'title', action) AS title, updated_at FROM invocations
		WHERE state = 'unverified' ORDER BY updated_at, id LIMIT $1`, listLimit)
	if w.UnverifiedItems, err = pgx.CollectRows(rows, pgx.RowToStructByName[UnverifiedItem]); err != nil {
		return w, fmt.Errorf("store.WaitingWork: %w", err)
	}
	return w, nil
}
