-- +goose Up
-- The write path's reads cost the same at any size of history.
--
-- The ledger's lookup by (system, idempotency key) is its primary key. Its
-- target index led with system, so a plan a connection cached while the
-- table was nearly empty (both indexes then cost the same) could read every
-- call of the system through it instead. Led by the target, the index serves
-- only what it is for: calls of an action on one target.
DROP INDEX adapter_requests_target;
CREATE INDEX adapter_requests_target ON adapter_requests (target_id, action, system, created_at);

-- A task's proposals, counted as they are inserted (a re-quote's successor
-- is the same proposal shown again and is not counted), so the proposal
-- budget is checked without counting the task's history.
LOCK TABLE tasks, invocations IN SHARE ROW EXCLUSIVE MODE;
ALTER TABLE tasks ADD COLUMN proposals_made integer NOT NULL DEFAULT 0 CHECK (proposals_made >= 0);
UPDATE tasks t SET proposals_made = c.n
FROM (SELECT task_id, count(*)::int AS n FROM invocations WHERE supersedes_id IS NULL GROUP BY task_id) c
WHERE t.id = c.task_id;

-- A task's writes holding a permit now, and the permits it was granted in
-- the last minute, each read from an index of its own.
CREATE INDEX invocations_task_dispatching ON invocations (task_id) WHERE state = 'dispatching';
CREATE INDEX invocations_task_permit ON invocations (task_id, permit_at) WHERE permit_at IS NOT NULL;

-- A recount locks its tasks first (in id order), and counts in a statement
-- of its own, which sees every change committed before the lock was given:
-- two transactions changing requests of one task each counted without the
-- other's change, and the second to commit stored its count over the
-- first's (TestConcurrentChangesOfOneTaskCountBoth).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION task_list_refresh(ids text[]) RETURNS void LANGUAGE sql AS $$
    SELECT 1 FROM tasks WHERE id = ANY(ids) ORDER BY id FOR UPDATE;
    UPDATE tasks t SET unverified_count = c.unverified, awaiting_approval_count = c.approval,
        awaiting_customer_count = c.customer, handoffs_waiting = c.handoffs
    FROM (
        SELECT x.id, r.unverified, r.approval, r.customer,
            (SELECT count(DISTINCT (e.conversation_id, e.intent, e.data::text)) FROM conversation_events e
             WHERE e.task_id = x.id AND e.mode = 'handed_off'
               AND NOT EXISTS (SELECT 1 FROM handoff_assignments h WHERE h.conversation_event_id = e.id)) AS handoffs
        FROM (SELECT DISTINCT unnest(ids) AS id) x
        -- One pass over the task's requests for the three counts.
        CROSS JOIN LATERAL (
            SELECT count(*) FILTER (WHERE i.state = 'unverified') AS unverified,
                count(*) FILTER (WHERE i.state = 'awaiting_approval') AS approval,
                count(*) FILTER (WHERE i.state = 'awaiting_confirmation') AS customer
            FROM invocations i WHERE i.task_id = x.id
                AND i.state IN ('unverified', 'awaiting_approval', 'awaiting_confirmation')
        ) r
    ) c
    WHERE t.id = c.id AND (t.unverified_count, t.awaiting_approval_count, t.awaiting_customer_count, t.handoffs_waiting)
        IS DISTINCT FROM (c.unverified::int, c.approval::int, c.customer::int, c.handoffs::int)
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION task_list_refresh(ids text[]) RETURNS void LANGUAGE sql AS $$
    UPDATE tasks t SET unverified_count = c.unverified, awaiting_approval_count = c.approval,
        awaiting_customer_count = c.customer, handoffs_waiting = c.handoffs
    FROM (
        SELECT x.id, r.unverified, r.approval, r.customer,
            (SELECT count(DISTINCT (e.conversation_id, e.intent, e.data::text)) FROM conversation_events e
             WHERE e.task_id = x.id AND e.mode = 'handed_off'
               AND NOT EXISTS (SELECT 1 FROM handoff_assignments h WHERE h.conversation_event_id = e.id)) AS handoffs
        FROM (SELECT DISTINCT unnest(ids) AS id) x
        -- One pass over the task's requests for the three counts.
        CROSS JOIN LATERAL (
            SELECT count(*) FILTER (WHERE i.state = 'unverified') AS unverified,
                count(*) FILTER (WHERE i.state = 'awaiting_approval') AS approval,
                count(*) FILTER (WHERE i.state = 'awaiting_confirmation') AS customer
            FROM invocations i WHERE i.task_id = x.id
                AND i.state IN ('unverified', 'awaiting_approval', 'awaiting_confirmation')
        ) r
    ) c
    WHERE t.id = c.id AND (t.unverified_count, t.awaiting_approval_count, t.awaiting_customer_count, t.handoffs_waiting)
        IS DISTINCT FROM (c.unverified::int, c.approval::int, c.customer::int, c.handoffs::int)
$$;
-- +goose StatementEnd

DROP INDEX invocations_task_permit;
DROP INDEX invocations_task_dispatching;
ALTER TABLE tasks DROP COLUMN proposals_made;
DROP INDEX adapter_requests_target;
CREATE INDEX adapter_requests_target ON adapter_requests (system, action, target_id, created_at);
