-- +goose Up
-- Exposure decides the route, and a new task resets nothing (issue 20, item 3).

-- Exposure counts what moved or is pending on the same customer and action
-- across tasks and assistants: each invocation carries its task's customer,
-- so that count is one indexed statement.
ALTER TABLE invocations ADD COLUMN customer_ref text NOT NULL DEFAULT '';
UPDATE invocations i SET customer_ref = t.customer_ref FROM tasks t WHERE t.id = i.task_id;

-- The order in which proposals were recorded. Proposals that share a
-- customer or a target are inserted one at a time (an advisory lock), so
-- this order is the order in which their exposure was counted: when a
-- route is checked again, an invocation counts only what came before it,
-- never a later proposal that was itself routed with it counted.
ALTER TABLE invocations ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;

-- What moved or was pending on the customer or target before an
-- invocation when it was last routed: the card shows what its approval
-- needs with it counted (the decision counts again).
ALTER TABLE invocations ADD COLUMN exposure_cents bigint NOT NULL DEFAULT 0;

-- Exposure is summed per customer and per target over a window; only
-- money (an amount) is summed.
CREATE INDEX invocations_exposure_customer ON invocations (system, action, customer_ref, created_at)
    WHERE amount_cents IS NOT NULL;
CREATE INDEX invocations_exposure_target ON invocations (system, action, target_id, created_at)
    WHERE amount_cents IS NOT NULL;

-- Duplicates are found per conversation again (invocations_dedup, from
-- 00003); the per-task index of 00011 has no reader left.
DROP INDEX invocations_dedup_task;

-- A policy refusal blocks the target for the customer, across their tasks,
-- until a person lifts it. task_id stays: it is the task the refusal
-- happened in. Of several blocks one customer had on one target (one per
-- task), the one in force, else the newest, is kept.
ALTER TABLE target_blocks ADD COLUMN customer_ref text NOT NULL DEFAULT '';
UPDATE target_blocks b SET customer_ref = t.customer_ref FROM tasks t WHERE t.id = b.task_id;
DELETE FROM target_blocks b USING (
    SELECT task_id, system, target_id, row_number() OVER (PARTITION BY customer_ref, system, target_id
        ORDER BY (lifted_at IS NULL) DESC, created_at DESC, task_id) AS n
    FROM target_blocks) ranked
WHERE ranked.n > 1 AND b.task_id = ranked.task_id AND b.system = ranked.system AND b.target_id = ranked.target_id;
ALTER TABLE target_blocks DROP CONSTRAINT target_blocks_pkey;
ALTER TABLE target_blocks ADD PRIMARY KEY (customer_ref, system, target_id);
CREATE INDEX target_blocks_task ON target_blocks (task_id);

-- +goose Down
DROP INDEX target_blocks_task;
ALTER TABLE target_blocks DROP CONSTRAINT target_blocks_pkey;
ALTER TABLE target_blocks ADD PRIMARY KEY (task_id, system, target_id);
ALTER TABLE target_blocks DROP COLUMN customer_ref;
CREATE INDEX invocations_dedup_task ON invocations (task_id, system, action, args_hash, created_at);
DROP INDEX invocations_exposure_target;
DROP INDEX invocations_exposure_customer;
ALTER TABLE invocations DROP COLUMN exposure_cents;
ALTER TABLE invocations DROP COLUMN seq;
ALTER TABLE invocations DROP COLUMN customer_ref;
