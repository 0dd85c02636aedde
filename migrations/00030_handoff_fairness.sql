-- +goose Up
-- No assistant can fill a person's queue (issue 32). The list takes each
-- assistant's waiting conversations in turn and the opening of a hand-off
-- counts an assistant's waiting ones, so both need to know whose a queue
-- row is: the assistant that handed off, copied from the event (a
-- conversation belongs to one assistant, so its open hand-offs agree).
ALTER TABLE handoffs_open ADD COLUMN assistant_id text;
UPDATE handoffs_open o SET assistant_id = e.assistant_id FROM conversation_events e WHERE e.id = o.conversation_event_id;
ALTER TABLE handoffs_open ALTER COLUMN assistant_id SET NOT NULL;

ALTER TABLE handoff_queue ADD COLUMN assistant_id text;
UPDATE handoff_queue q SET assistant_id = o.assistant_id FROM handoffs_open o WHERE o.conversation_event_id = q.last_id;
ALTER TABLE handoff_queue ALTER COLUMN assistant_id SET NOT NULL;
-- What store.LockHandoffOpening counts (an assistant's waiting
-- conversations) and the list ranks by.
CREATE INDEX handoff_queue_assistant ON handoff_queue (assistant_id, taken, first_at, id);

-- handoff_queue_refresh as in 00026, with the assistant of the latest.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION handoff_queue_refresh(ids text[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('handoff_queue:' || c, 0))
    FROM (SELECT DISTINCT unnest(ids) AS c ORDER BY 1) x;
    DELETE FROM handoff_queue q WHERE q.conversation_id = ANY(ids)
        AND NOT EXISTS (SELECT 1 FROM handoffs_open o WHERE o.conversation_id = q.conversation_id);
    INSERT INTO handoff_queue AS q (conversation_id, id, last_id, n, first_at, last_at, intent, task_id, taken_by, taken_at, assistant_id)
    SELECT o.conversation_id, min(o.conversation_event_id),
        (array_agg(o.conversation_event_id ORDER BY o.at DESC, o.conversation_event_id DESC))[1], count(*), min(o.at), max(o.at),
        (array_agg(o.intent ORDER BY o.at DESC, o.conversation_event_id DESC))[1],
        (array_agg(o.task_id ORDER BY o.at DESC, o.conversation_event_id DESC) FILTER (WHERE o.task_id IS NOT NULL))[1],
        (array_agg(o.taken_by ORDER BY o.taken_at, o.conversation_event_id) FILTER (WHERE o.taken_by IS NOT NULL))[1], min(o.taken_at),
        (array_agg(o.assistant_id ORDER BY o.at DESC, o.conversation_event_id DESC))[1]
    FROM handoffs_open o WHERE o.conversation_id = ANY(ids) GROUP BY o.conversation_id
    ON CONFLICT (conversation_id) DO UPDATE SET id = EXCLUDED.id, last_id = EXCLUDED.last_id, n = EXCLUDED.n,
        first_at = EXCLUDED.first_at, last_at = EXCLUDED.last_at, intent = EXCLUDED.intent, task_id = EXCLUDED.task_id,
        taken_by = EXCLUDED.taken_by, taken_at = EXCLUDED.taken_at, assistant_id = EXCLUDED.assistant_id;
END
$$;
-- +goose StatementEnd

-- The trigger as in 00027, copying the event's assistant.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION conversation_events_handoffs_open() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids text[];
BEGIN
    -- The tasks first (the recount's lock, taken again there for free),
    -- then the conversations.
    PERFORM 1 FROM tasks WHERE id IN (SELECT task_id FROM new_rows WHERE mode = 'handed_off') ORDER BY id FOR NO KEY UPDATE;
    INSERT INTO handoffs_open (conversation_event_id, conversation_id, task_id, intent, at, assistant_id)
    SELECT id, conversation_id, task_id, intent, at, assistant_id FROM new_rows WHERE mode = 'handed_off';
    SELECT array_agg(DISTINCT conversation_id) INTO ids FROM new_rows WHERE mode = 'handed_off';
    IF ids IS NOT NULL THEN
        PERFORM handoff_queue_refresh(ids);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION conversation_events_handoffs_open() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids text[];
BEGIN
    PERFORM 1 FROM tasks WHERE id IN (SELECT task_id FROM new_rows WHERE mode = 'handed_off') ORDER BY id FOR NO KEY UPDATE;
    INSERT INTO handoffs_open (conversation_event_id, conversation_id, task_id, intent, at)
    SELECT id, conversation_id, task_id, intent, at FROM new_rows WHERE mode = 'handed_off';
    SELECT array_agg(DISTINCT conversation_id) INTO ids FROM new_rows WHERE mode = 'handed_off';
    IF ids IS NOT NULL THEN
        PERFORM handoff_queue_refresh(ids);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION handoff_queue_refresh(ids text[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('handoff_queue:' || c, 0))
    FROM (SELECT DISTINCT unnest(ids) AS c ORDER BY 1) x;
    DELETE FROM handoff_queue q WHERE q.conversation_id = ANY(ids)
        AND NOT EXISTS (SELECT 1 FROM handoffs_open o WHERE o.conversation_id = q.conversation_id);
    INSERT INTO handoff_queue AS q (conversation_id, id, last_id, n, first_at, last_at, intent, task_id, taken_by, taken_at)
    SELECT o.conversation_id, min(o.conversation_event_id),
        (array_agg(o.conversation_event_id ORDER BY o.at DESC, o.conversation_event_id DESC))[1], count(*), min(o.at), max(o.at),
        (array_agg(o.intent ORDER BY o.at DESC, o.conversation_event_id DESC))[1],
        (array_agg(o.task_id ORDER BY o.at DESC, o.conversation_event_id DESC) FILTER (WHERE o.task_id IS NOT NULL))[1],
        (array_agg(o.taken_by ORDER BY o.taken_at, o.conversation_event_id) FILTER (WHERE o.taken_by IS NOT NULL))[1], min(o.taken_at)
    FROM handoffs_open o WHERE o.conversation_id = ANY(ids) GROUP BY o.conversation_id
    ON CONFLICT (conversation_id) DO UPDATE SET id = EXCLUDED.id, last_id = EXCLUDED.last_id, n = EXCLUDED.n,
        first_at = EXCLUDED.first_at, last_at = EXCLUDED.last_at, intent = EXCLUDED.intent, task_id = EXCLUDED.task_id,
        taken_by = EXCLUDED.taken_by, taken_at = EXCLUDED.taken_at;
END
$$;
-- +goose StatementEnd

DROP INDEX handoff_queue_assistant;
ALTER TABLE handoff_queue DROP COLUMN assistant_id;
ALTER TABLE handoffs_open DROP COLUMN assistant_id;
