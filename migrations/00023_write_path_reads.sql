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

-- +goose Down
DROP INDEX invocations_task_permit;
DROP INDEX invocations_task_dispatching;
ALTER TABLE tasks DROP COLUMN proposals_made;
DROP INDEX adapter_requests_target;
CREATE INDEX adapter_requests_target ON adapter_requests (system, action, target_id, created_at);
