package store

import (
	"context"
	"fmt"
	"time"
)

// ExposureQuery names what an exposure sums: one action of one system (or,
// with a business key, one business object across systems), on one
// customer and on one target, over invocations created at or after
// Since. Before, when set, is an invocation's id: only invocations recorded
// before it count (the invocation itself does not).
type ExposureQuery struct {
	System, Action        string
	CustomerRef, TargetID string
	Since                 time.Time
	Before                string
	// Currency is the ISO 4217 code whose amounts are summed (upper case;
	// a quote without one is US dollars): amounts in other currencies are
	// never added to them, only named in OtherCurrency.
	Currency string
	// KeyName and KeyValue, when KeyName is set, are the target's business
	// key (the quote's target.business_key): the target then also counts
	// every invocation on an object with the same key, in any system and
	// action, and the customer every one of theirs on an object with a
	// key of that name.
	KeyName, KeyValue string
}

// The business key of an invocation's target, read from its quote.
const (
	businessKeyName  = `(quote #>> '{target,business_key,name}')`
	businessKeyValue = `(quote #>> '{target,business_key,value}')`
)

// Exposure is the money already moved or pending: on the customer (across
// their targets) and on the target (across customers), in the minor units
// of the query's currency. OtherCurrency, when not empty, is a currency
// other than the query's that also moved or is pending there (the first
// in alphabetical order): those amounts are not in the sums.
type Exposure struct {
	CustomerCents int64
	TargetCents   int64
	OtherCurrency string
}

// exposureCurrency is an invocation's currency as the exposure compares
// it: its quote's, upper case, US dollars when the quote names none.
const exposureCurrency = `upper(coalesce(nullif(quote->>'currency', ''), 'USD'))`

// Exposure sums the amounts in one currency of invocations that have
// moved money or may still move it (awaiting a decision, approved, dispatching, unverified,
// completed and not reversed), across tasks and assistants, in one
// statement on the exposure indexes. Ended without effect (failed,
// rejected, expired, not dispatched) and reversed work does not count.
func (t *Tx) Exposure(ctx context.Context, q ExposureQuery) (Exposure, error) {
	var e Exposure
	err := t.tx.QueryRow(ctx, `
		SELECT coalesce(sum(amount_cents) FILTER (WHERE customer_ref = $3 AND `+exposureCurrency+` = $7), 0),
			coalesce(sum(amount_cents) FILTER (WHERE (target_id = $4 AND system = $1 AND action = $2
				OR `+businessKeyName+` = $8 AND `+businessKeyValue+` = $9) AND `+exposureCurrency+` = $7), 0),
			coalesce(min(`+exposureCurrency+`) FILTER (WHERE `+exposureCurrency+` <> $7), '')
		FROM invocations
		WHERE amount_cents IS NOT NULL AND created_at >= $5
			AND (system = $1 AND action = $2 AND (customer_ref = $3 OR target_id = $4)
				OR `+businessKeyName+` = $8 AND (customer_ref = $3 OR `+businessKeyValue+` = $9))
			AND state IN ('awaiting_confirmation', 'awaiting_approval', 'approved', 'dispatching', 'unverified', 'completed')
			AND ($6::text = '' OR seq < (SELECT seq FROM invocations WHERE id = $6))`,
		q.System, q.Action, q.CustomerRef, q.TargetID, q.Since, q.Before, q.Currency, q.KeyName, q.KeyValue).Scan(&e.CustomerCents, &e.TargetCents, &e.OtherCurrency)
	if err != nil {
		return Exposure{}, fmt.Errorf("store.Exposure(%s/%s): %w", q.System, q.Action, err)
	}
	return e, nil
}

const recentProposalsSQL = `
		SELECT count(*) FROM invocations WHERE task_id = $1 AND created_at >= $2 AND supersedes_id IS NULL`

// Deciders says who authorised an invocation's arguments (argsHash, hex):
// the policy, the customer, and how many different console users.
type Deciders struct {
	Policy, Customer bool
	Users            int
}

// Deciders reads, from the audit trail, who approved or confirmed the
// arguments with hash argsHash of an invocation; a console user counts
// only while their role is one of roles (the policy's deciders now).
func (t *Tx) Deciders(ctx context.Context, invocationID, argsHash string, roles []string) (Deciders, error) {
	var d Deciders
	err := t.tx.QueryRow(ctx, `
		SELECT coalesce(bool_or(e.actor_kind = 'policy'), false), coalesce(bool_or(e.actor_kind = 'customer'), false),
			count(DISTINCT e.actor_id) FILTER (WHERE e.actor_kind = 'user' AND u.role = ANY($3))
		FROM events e
		LEFT JOIN users u ON u.id = CASE WHEN e.actor_kind = 'user' THEN e.actor_id::bigint END
		WHERE e.invocation_id = $1 AND e.action IN ('invocation.approved', 'invocation.first_approval', 'invocation.confirmed')
			AND (e.actor_kind = 'policy' OR e.data->>'args_hash' = $2)`, invocationID, argsHash, roles).Scan(&d.Policy, &d.Customer, &d.Users)
	if err != nil {
		return Deciders{}, fmt.Errorf("store.Deciders(%s): %w", invocationID, err)
	}
	return d, nil
}
