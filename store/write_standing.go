package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// StandingQuery names what decides whether a write may still be recorded,
// besides its task: the API key its actor acted with (empty when it acted
// without one), or else the task whose assistant the write belongs to
// (a customer's re-quote or a person's edit of the assistant's proposal),
// and the action.
type StandingQuery struct {
	KeyID string
	// GrantID, read only when KeyID is empty, is the OAuth grant whose
	// access token the actor acted with: read as a key is, with its
	// assistant and that assistant's switch for the action.
	GrantID string
	// OwnerTask, read only when KeyID and GrantID are empty, names the task whose
	// assistant (if it has one) is read as for a key: its row and its
	// switch for the action, share-locked.
	OwnerTask      string
	System, Action string
}

// Standing is what a write's transaction found of the rows that admitted
// it, each share-locked: revoking the key (RevokeAPIKey), disabling its
// assistant (SetAssistantDisabled), changing its grants
// (SetAssistantGrants), switching the action off for it
// (SetAssistantAction) or changing the action's policy waits for the
// write's commit, and one that committed first is what the write reads.
// Key is nil when the query named no key or an unknown one; Assistant is
// the key's assistant, or the owner task's when the query named no key
// (nil when there is none); ActionEnabled says that assistant has the
// action turned on;
// Policy is nil when the action has none.
type Standing struct {
	Key *APIKey
	// Grant is the query's OAuth grant, share-locked with the person who
	// consented (revoking the grant or its client, disabling the person
	// or changing their role waits for the write's commit); nil when the
	// query named none, an unknown one, or one whose person is disabled
	// or no longer staff.
	Grant         *OAuthGrant
	Assistant     *Assistant
	ActionEnabled bool
	Policy        *Policy
}

const (
	standingKeySQL       = `SELECT ` + apiKeyColumns + ` FROM api_keys WHERE id = $1 FOR SHARE`
	standingAssistantSQL = `SELECT ` + assistantColumns + ` FROM assistants
		WHERE id = (SELECT assistant_id FROM api_keys WHERE id = $1) FOR SHARE`
	standingActionSQL = `SELECT a.enabled FROM assistant_actions a JOIN api_keys k ON k.assistant_id = a.assistant_id
		WHERE k.id = $1 AND a.system = $2 AND a.action = $3 FOR SHARE OF a`
	// A grant stands while the person who consented is still enabled
	// staff: their row is share-locked with it, so a disabling or role
	// change waits for the write. (Revoking the client revokes its grants
	// in the same transaction, which the grant's lock already orders; the
	// client row is not locked, which would deadlock with that
	// revocation's client-then-grants order.)
	standingGrantSQL = `SELECT g.id, g.client_id, g.user_id, g.assistant_id, g.acts_as_user, g.resource, g.created_at,
			g.expires_at, g.revoked_at, g.revoked_why
		FROM oauth_grants g JOIN users u ON u.id = g.user_id
		WHERE g.id = $1 AND u.disabled_at IS NULL AND u.role <> 'customer'
		FOR SHARE OF g, u`
	standingGrantAssistantSQL = `SELECT ` + assistantColumns + ` FROM assistants
		WHERE id = (SELECT assistant_id FROM oauth_grants WHERE id = $1) FOR SHARE`
	standingGrantActionSQL = `SELECT a.enabled FROM assistant_actions a JOIN oauth_grants g ON g.assistant_id = a.assistant_id
		WHERE g.id = $1 AND a.system = $2 AND a.action = $3 FOR SHARE OF a`
	standingOwnerSQL = `SELECT ` + assistantColumns + ` FROM assistants
		WHERE id = (SELECT assistant_id FROM tasks WHERE id = $1) FOR SHARE`
	standingOwnerActionSQL = `SELECT a.enabled FROM assistant_actions a JOIN tasks t ON t.assistant_id = a.assistant_id
		WHERE t.id = $1 AND a.system = $2 AND a.action = $3 FOR SHARE OF a`
)

// queueStanding queues the reads of q in b: the key's only when it names
// one, else the owner task's assistant's when it names that.
func queueStanding(b *pgx.Batch, q StandingQuery) {
	switch {
	case q.KeyID != "":
		b.Queue(standingKeySQL, q.KeyID)
		b.Queue(standingAssistantSQL, q.KeyID)
		b.Queue(standingActionSQL, q.KeyID, q.System, q.Action)
	case q.GrantID != "":
		b.Queue(standingGrantSQL, q.GrantID)
		b.Queue(standingGrantAssistantSQL, q.GrantID)
		b.Queue(standingGrantActionSQL, q.GrantID, q.System, q.Action)
	case q.OwnerTask != "":
		b.Queue(standingOwnerSQL, q.OwnerTask)
		b.Queue(standingOwnerActionSQL, q.OwnerTask, q.System, q.Action)
	}
	b.Queue(policySQL+" FOR SHARE", q.System, q.Action)
}

// readStanding reads what queueStanding queued, in its order.
func readStanding(br pgx.BatchResults, q StandingQuery) (Standing, error) {
	var out Standing
	if q.KeyID != "" {
		rows, _ := br.Query()
		if k, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[APIKey]); err == nil {
			out.Key = &k
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return out, fmt.Errorf("store: api key %s: %w", q.KeyID, err)
		}
	} else if q.GrantID != "" {
		rows, _ := br.Query()
		if g, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[OAuthGrant]); err == nil {
			out.Grant = &g
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return out, fmt.Errorf("store: grant %s: %w", q.GrantID, err)
		}
	}
	if who := standingOf(q); who != "" {
		rows, _ := br.Query()
		if a, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Assistant]); err == nil {
			out.Assistant = &a
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return out, fmt.Errorf("store: assistant of %s: %w", who, err)
		}
		if err := br.QueryRow().Scan(&out.ActionEnabled); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return out, fmt.Errorf("store: action %s/%s of %s: %w", q.System, q.Action, who, err)
		}
	}
	rows, _ := br.Query()
	if p, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Policy]); err == nil {
		out.Policy = &p
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return out, fmt.Errorf("store: policy %s/%s: %w", q.System, q.Action, err)
	}
	return out, nil
}

// standingOf names whose assistant q reads, for errors: its key, its
// owner task, or nobody ("").
func standingOf(q StandingQuery) string {
	switch {
	case q.KeyID != "":
		return "key " + q.KeyID
	case q.GrantID != "":
		return "grant " + q.GrantID
	case q.OwnerTask != "":
		return "task " + q.OwnerTask
	}
	return ""
}

// WriteChecks locks the task (FOR UPDATE) and reads the write's standing
// (share-locked, see Standing) in one round trip: what a write that is
// not a new proposal (a re-quote's successor, an agent's edit) checks
// under its task's lock before it records. ErrNotFound when there is no
// such task.
func (t *Tx) WriteChecks(ctx context.Context, taskID string, q StandingQuery) (Task, Standing, error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT `+taskColumns+` FROM tasks WHERE id = $1 FOR UPDATE`, taskID)
	queueStanding(b, q)
	br := t.tx.SendBatch(ctx, b)
	task, st, err := func() (Task, Standing, error) {
		rows, _ := br.Query()
		task, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Task])
		if err != nil {
			return Task{}, Standing{}, fmt.Errorf("store: task %s: %w", taskID, notFound(err, "task"))
		}
		st, err := readStanding(br, q)
		return task, st, err
	}()
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("store.WriteChecks: %w", cerr)
	}
	return task, st, err
}
