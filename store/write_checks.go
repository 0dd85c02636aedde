package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The write path's checks, each set read in one round trip: the statements
// are the ones the single reads send (so they share their prepared
// statements), queued in a batch in the order they ran one by one. They
// only read and lock, in the transaction's order, so sending them together
// changes nothing but the round trips.

// ProposalChecksQuery names what a proposal's transaction looks at under
// its locks.
type ProposalChecksQuery struct {
	TaskID string
	// Duplicate is the proposal as its twin would be (Tx.RecentDuplicate).
	Duplicate DuplicateQuery
	// CustomerRef, TargetID and Key name the block that would hold the
	// proposal back (Tx.ActiveBlock); Key is Duplicate's.
	CustomerRef, TargetID string
	ProposalsSince        time.Time
	// Standing names the key the proposal is made with and its action.
	Standing StandingQuery
}

// ProposalChecks is what it found: the task, locked (FOR UPDATE); the
// newest live duplicate, if any (Tx.RecentDuplicate); the block in force on
// the customer's target, if any (Tx.ActiveBlock); the task's proposals
// since ProposalsSince (Tx.RecentProposals); and the write's standing
// (Tx.WriteChecks).
type ProposalChecks struct {
	Task            Task
	Duplicate       *Invocation
	Block           *TargetBlock
	RecentProposals int
	Standing        Standing
}

// ProposalChecks locks the task and reads the proposal's checks in one
// round trip.
func (t *Tx) ProposalChecks(ctx context.Context, q ProposalChecksQuery) (ProposalChecks, error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT `+taskColumns+` FROM tasks WHERE id = $1 FOR UPDATE`, q.TaskID)
	b.Queue(`SELECT `+invocationColumns+` FROM invocations WHERE `+recentDuplicate, q.Duplicate.params()...)
	b.Queue(activeBlockSQL, q.CustomerRef, q.Duplicate.System, q.TargetID, q.Duplicate.KeyName, q.Duplicate.KeyValue)
	b.Queue(recentProposalsSQL, q.TaskID, q.ProposalsSince)
	queueStanding(b, q.Standing)
	br := t.tx.SendBatch(ctx, b)
	out, err := func() (ProposalChecks, error) {
		var out ProposalChecks
		rows, _ := br.Query()
		task, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Task])
		if err != nil {
			return out, fmt.Errorf("store: task %s: %w", q.TaskID, notFound(err, "task"))
		}
		out.Task = task
		rows, _ = br.Query()
		if dup, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Invocation]); err == nil {
			out.Duplicate = &dup
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return out, fmt.Errorf("store: invocation: %w", err)
		}
		rows, _ = br.Query()
		if block, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[TargetBlock]); err == nil {
			out.Block = &block
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return out, fmt.Errorf("store.ActiveBlock: %w", err)
		}
		if err := br.QueryRow().Scan(&out.RecentProposals); err != nil {
			return out, fmt.Errorf("store.RecentProposals(%s): %w", q.TaskID, err)
		}
		out.Standing, err = readStanding(br, q.Standing)
		return out, err
	}()
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("store.ProposalChecks: %w", cerr)
	}
	return out, err
}

// PermitReads is what a permit reads before it decides: the global stop
// and the action's policy, both share-locked (so flipping the stop or
// changing the policy waits for the permit), and the task's writes in
// flight and permits since a time. Policy is nil when the action has none.
type PermitReads struct {
	Stopped                bool
	Policy                 *Policy
	Inflight, PermitsSince int
}

// PermitReads reads them in one round trip (Tx.GlobalStop,
// Tx.PolicyForShare, Tx.TaskLoad).
func (t *Tx) PermitReads(ctx context.Context, system, action, taskID string, since time.Time) (PermitReads, error) {
	b := &pgx.Batch{}
	b.Queue(globalStopSQL)
	b.Queue(policySQL+" FOR SHARE", system, action)
	b.Queue(taskLoadSQL, taskID, since)
	br := t.tx.SendBatch(ctx, b)
	out, err := func() (PermitReads, error) {
		var out PermitReads
		if err := br.QueryRow().Scan(&out.Stopped); err != nil {
			return out, fmt.Errorf("store.GlobalStop: %w", err)
		}
		rows, _ := br.Query()
		if p, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Policy]); err == nil {
			out.Policy = &p
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return out, fmt.Errorf("store: policy %s/%s: %w", system, action, err)
		}
		if err := br.QueryRow().Scan(&out.Inflight, &out.PermitsSince); err != nil {
			return out, fmt.Errorf("store.TaskLoad(%s): %w", taskID, err)
		}
		return out, nil
	}()
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("store.PermitReads: %w", cerr)
	}
	return out, err
}
