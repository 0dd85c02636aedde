-- +goose Up
-- The task list reads what each task needs from stored columns and its
-- counts from a small table, both kept by triggers in the transaction of
-- the change, so reading a page or its counts costs the same at any size.
--
-- Per task: the requests whose result needs checking, awaiting approval or
-- awaiting the customer, the hand-offs nobody took, and the list's rank
-- (0 a result to check, 1 something else needs a person, 2 active,
-- 3 ended), which the list orders by with updated_at and id.
--
-- A console still running the old code during the migration must not
-- change a request or a hand-off between the backfill below and the
-- triggers that keep it: those tables are held until this commits.
LOCK TABLE tasks, invocations, conversation_events, handoff_assignments IN SHARE ROW EXCLUSIVE MODE;
ALTER TABLE tasks
    ADD COLUMN unverified_count        integer NOT NULL DEFAULT 0,
    ADD COLUMN awaiting_approval_count integer NOT NULL DEFAULT 0,
    ADD COLUMN awaiting_customer_count integer NOT NULL DEFAULT 0,
    ADD COLUMN handoffs_waiting        integer NOT NULL DEFAULT 0,
    ADD COLUMN list_rank               smallint NOT NULL GENERATED ALWAYS AS (
        CASE WHEN unverified_count > 0 THEN 0
             WHEN awaiting_approval_count > 0 OR handoffs_waiting > 0 OR state = 'paused' THEN 1
             WHEN state = 'active' THEN 2 ELSE 3 END) STORED;
CREATE INDEX tasks_list ON tasks (list_rank, updated_at DESC, id DESC);
CREATE INDEX tasks_list_state ON tasks (state, list_rank, updated_at DESC, id DESC);

-- The actions a task has requests of, once each: the list's action filter
-- and the per-action counts.
CREATE TABLE task_actions (
    task_id text NOT NULL,
    action  text NOT NULL,
    PRIMARY KEY (task_id, action)
);
CREATE INDEX task_actions_action ON task_actions (action, task_id);

-- How many tasks are in each cell of (action, state, has a result to
-- check, has a card to approve, has a hand-off nobody took); action ''
-- holds every task, another action the tasks with a request of it. Every
-- count of the list is a sum of cells. Writers add to the cell row of
-- their task's shard (a hash of the task id), so writers on other tasks
-- rarely wait for each other.
CREATE TABLE task_list_cells (
    shard      smallint NOT NULL,
    action     text     NOT NULL,
    state      text     NOT NULL,
    unverified boolean  NOT NULL,
    approval   boolean  NOT NULL,
    handoff    boolean  NOT NULL,
    tasks      bigint   NOT NULL,
    PRIMARY KEY (shard, action, state, unverified, approval, handoff)
);

-- Hand-offs of a task, for recounting one task's waiting hand-offs.
CREATE INDEX conversation_events_task_handed_off ON conversation_events (task_id)
    WHERE mode = 'handed_off' AND task_id IS NOT NULL;

-- A person's hand-offs, for the list's "mine".
CREATE INDEX handoff_assignments_user ON handoff_assignments (user_id);

-- +goose StatementBegin
CREATE FUNCTION task_list_shard(task_id text) RETURNS smallint LANGUAGE sql IMMUTABLE AS $$
    SELECT (hashtext(task_id) & 63)::smallint
$$;
-- +goose StatementEnd

-- task_list_refresh recounts the given tasks' requests and hand-offs from
-- their rows and stores them where they differ.
-- +goose StatementBegin
CREATE FUNCTION task_list_refresh(ids text[]) RETURNS void LANGUAGE sql AS $$
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

-- task_list_add adds n to the cells of a task as it is (state and flags)
-- for '' and each of its actions (or only the action given). The cells are
-- written in key order, so two transactions updating the same cells lock
-- them in the same order; only writers of one cell wait for each other.
-- +goose StatementBegin
CREATE FUNCTION task_list_add(deltas jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_list_cells AS c (shard, action, state, unverified, approval, handoff, tasks)
    SELECT (d->>'shard')::smallint, d->>'action', d->>'state', (d->>'unverified')::boolean, (d->>'approval')::boolean,
        (d->>'handoff')::boolean, sum((d->>'n')::bigint)
    FROM jsonb_array_elements(deltas) d
    GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum((d->>'n')::bigint) <> 0
    ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (shard, action, state, unverified, approval, handoff) DO UPDATE SET tasks = c.tasks + EXCLUDED.tasks;
END
$$;
-- +goose StatementEnd

-- tasks_cells moves a changed task's count from the cells it was in to
-- the cells it is in now.
-- +goose StatementBegin
CREATE FUNCTION tasks_cells() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    deltas jsonb;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT jsonb_agg(jsonb_build_object('shard', task_list_shard(n.id), 'action', a.action, 'state', n.state,
            'unverified', n.unverified_count > 0, 'approval', n.awaiting_approval_count > 0, 'handoff', n.handoffs_waiting > 0, 'n', 1))
        INTO deltas
        FROM new_rows n CROSS JOIN LATERAL (SELECT '' AS action UNION ALL SELECT ta.action FROM task_actions ta WHERE ta.task_id = n.id) a;
    ELSIF TG_OP = 'UPDATE' THEN
        SELECT jsonb_agg(d) INTO deltas FROM (
            SELECT jsonb_build_object('shard', task_list_shard(x.id), 'action', a.action, 'state', x.state,
                'unverified', x.u, 'approval', x.ap, 'handoff', x.h, 'n', x.n) AS d
            FROM (
                SELECT o.id, o.state, o.unverified_count > 0 AS u, o.awaiting_approval_count > 0 AS ap, o.handoffs_waiting > 0 AS h, -1 AS n
                FROM old_rows o JOIN new_rows n ON n.id = o.id
                WHERE (o.state, o.unverified_count > 0, o.awaiting_approval_count > 0, o.handoffs_waiting > 0)
                    IS DISTINCT FROM (n.state, n.unverified_count > 0, n.awaiting_approval_count > 0, n.handoffs_waiting > 0)
                UNION ALL
                SELECT n.id, n.state, n.unverified_count > 0, n.awaiting_approval_count > 0, n.handoffs_waiting > 0, 1
                FROM old_rows o JOIN new_rows n ON n.id = o.id
                WHERE (o.state, o.unverified_count > 0, o.awaiting_approval_count > 0, o.handoffs_waiting > 0)
                    IS DISTINCT FROM (n.state, n.unverified_count > 0, n.awaiting_approval_count > 0, n.handoffs_waiting > 0)
            ) x CROSS JOIN LATERAL (SELECT '' AS action UNION ALL SELECT ta.action FROM task_actions ta WHERE ta.task_id = x.id) a
        ) y;
    ELSE
        SELECT jsonb_agg(jsonb_build_object('shard', task_list_shard(o.id), 'action', a.action, 'state', o.state,
            'unverified', o.unverified_count > 0, 'approval', o.awaiting_approval_count > 0, 'handoff', o.handoffs_waiting > 0, 'n', -1))
        INTO deltas
        FROM old_rows o CROSS JOIN LATERAL (SELECT '' AS action UNION ALL SELECT ta.action FROM task_actions ta WHERE ta.task_id = o.id) a;
        DELETE FROM task_actions ta USING old_rows o WHERE ta.task_id = o.id;
    END IF;
    IF deltas IS NOT NULL THEN
        PERFORM task_list_add(deltas);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- invocations_task_list records a task's new actions (counting the task
-- in their cells) and recounts the tasks whose requests entered or left a
-- state the list counts.
-- +goose StatementBegin
CREATE FUNCTION invocations_task_list() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    deltas jsonb;
    ids text[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH added AS (
            INSERT INTO task_actions (task_id, action)
            SELECT DISTINCT task_id, action FROM new_rows
            ON CONFLICT DO NOTHING
            RETURNING task_id, action
        )
        SELECT jsonb_agg(jsonb_build_object('shard', task_list_shard(t.id), 'action', a.action, 'state', t.state,
            'unverified', t.unverified_count > 0, 'approval', t.awaiting_approval_count > 0, 'handoff', t.handoffs_waiting > 0, 'n', 1))
        INTO deltas
        FROM added a JOIN tasks t ON t.id = a.task_id;
        IF deltas IS NOT NULL THEN
            PERFORM task_list_add(deltas);
        END IF;
        SELECT array_agg(DISTINCT task_id) INTO ids FROM new_rows
        WHERE state IN ('unverified', 'awaiting_approval', 'awaiting_confirmation');
    ELSE
        SELECT array_agg(DISTINCT n.task_id) INTO ids FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE o.state IS DISTINCT FROM n.state
          AND (o.state IN ('unverified', 'awaiting_approval', 'awaiting_confirmation')
            OR n.state IN ('unverified', 'awaiting_approval', 'awaiting_confirmation'));
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM task_list_refresh(ids);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- conversation_events_task_list and handoff_assignments_task_list recount the waiting hand-offs of the tasks whose
-- hand-offs were made, taken or given back.
-- +goose StatementBegin
CREATE FUNCTION conversation_events_task_list() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids text[];
BEGIN
    SELECT array_agg(DISTINCT task_id) INTO ids FROM new_rows WHERE mode = 'handed_off' AND task_id IS NOT NULL;
    IF ids IS NOT NULL THEN
        PERFORM task_list_refresh(ids);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION handoff_assignments_task_list() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids text[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(DISTINCT e.task_id) INTO ids FROM new_rows r JOIN conversation_events e ON e.id = r.conversation_event_id
        WHERE e.task_id IS NOT NULL;
    ELSE
        SELECT array_agg(DISTINCT e.task_id) INTO ids FROM old_rows r JOIN conversation_events e ON e.id = r.conversation_event_id
        WHERE e.task_id IS NOT NULL;
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM task_list_refresh(ids);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- Backfill, before the triggers exist.
INSERT INTO task_actions (task_id, action) SELECT DISTINCT task_id, action FROM invocations;
UPDATE tasks t SET unverified_count = c.unverified, awaiting_approval_count = c.approval, awaiting_customer_count = c.customer
FROM (SELECT task_id, count(*) FILTER (WHERE state = 'unverified') AS unverified,
          count(*) FILTER (WHERE state = 'awaiting_approval') AS approval,
          count(*) FILTER (WHERE state = 'awaiting_confirmation') AS customer
      FROM invocations WHERE state IN ('unverified', 'awaiting_approval', 'awaiting_confirmation') GROUP BY task_id) c
WHERE t.id = c.task_id;
UPDATE tasks t SET handoffs_waiting = c.n
FROM (SELECT e.task_id, count(DISTINCT (e.conversation_id, e.intent, e.data::text)) AS n FROM conversation_events e
      WHERE e.mode = 'handed_off' AND e.task_id IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM handoff_assignments h WHERE h.conversation_event_id = e.id)
      GROUP BY e.task_id) c
WHERE t.id = c.task_id;
INSERT INTO task_list_cells (shard, action, state, unverified, approval, handoff, tasks)
SELECT task_list_shard(t.id), a.action, t.state, t.unverified_count > 0, t.awaiting_approval_count > 0, t.handoffs_waiting > 0, count(*)
FROM tasks t CROSS JOIN LATERAL (SELECT '' AS action UNION ALL SELECT ta.action FROM task_actions ta WHERE ta.task_id = t.id) a
GROUP BY 1, 2, 3, 4, 5, 6;

CREATE TRIGGER tasks_cells_insert AFTER INSERT ON tasks REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION tasks_cells();
CREATE TRIGGER tasks_cells_update AFTER UPDATE ON tasks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION tasks_cells();
CREATE TRIGGER tasks_cells_delete AFTER DELETE ON tasks REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION tasks_cells();
CREATE TRIGGER invocations_task_list_insert AFTER INSERT ON invocations REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION invocations_task_list();
CREATE TRIGGER invocations_task_list_update AFTER UPDATE ON invocations REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION invocations_task_list();
CREATE TRIGGER conversation_events_task_list AFTER INSERT ON conversation_events REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION conversation_events_task_list();
CREATE TRIGGER handoff_assignments_task_list_insert AFTER INSERT ON handoff_assignments REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION handoff_assignments_task_list();
CREATE TRIGGER handoff_assignments_task_list_delete AFTER DELETE ON handoff_assignments REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION handoff_assignments_task_list();

-- +goose Down
DROP TRIGGER handoff_assignments_task_list_delete ON handoff_assignments;
DROP TRIGGER handoff_assignments_task_list_insert ON handoff_assignments;
DROP TRIGGER conversation_events_task_list ON conversation_events;
DROP TRIGGER invocations_task_list_update ON invocations;
DROP TRIGGER invocations_task_list_insert ON invocations;
DROP TRIGGER tasks_cells_delete ON tasks;
DROP TRIGGER tasks_cells_update ON tasks;
DROP TRIGGER tasks_cells_insert ON tasks;
DROP FUNCTION handoff_assignments_task_list();
DROP FUNCTION conversation_events_task_list();
DROP FUNCTION invocations_task_list();
DROP FUNCTION tasks_cells();
DROP FUNCTION task_list_add(jsonb);
DROP FUNCTION task_list_refresh(text[]);
DROP FUNCTION task_list_shard(text);
DROP INDEX handoff_assignments_user;
DROP INDEX conversation_events_task_handed_off;
DROP TABLE task_list_cells;
DROP TABLE task_actions;
DROP INDEX tasks_list_state;
DROP INDEX tasks_list;
ALTER TABLE tasks
    DROP COLUMN list_rank,
    DROP COLUMN handoffs_waiting,
    DROP COLUMN awaiting_customer_count,
    DROP COLUMN awaiting_approval_count,
    DROP COLUMN unverified_count;
