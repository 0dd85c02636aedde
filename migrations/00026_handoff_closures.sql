-- +goose Up
-- A hand-off ends when a person resolves it or gives the conversation back
-- to the assistant, with a note the assistant is told (GET
-- /api/v1/conversations/{id}, the handoff.resolved and handoff.given_back
-- webhooks). One row per hand-off event closed: closing a conversation
-- closes every hand-off of it still open, and an event is closed once — the
-- primary key is what makes a second person's click a no-op.
CREATE TABLE handoff_closures (
    conversation_event_id bigint      PRIMARY KEY REFERENCES conversation_events (id),
    outcome               text        NOT NULL CHECK (outcome IN ('resolved', 'given_back')),
    user_id               bigint      NOT NULL REFERENCES users (id),
    note                  text        NOT NULL,
    at                    timestamptz NOT NULL
);

-- The hand-offs still open, the list's and the counts' only source: they
-- cost what is open, not every hand-off ever made. A hand-off is added when
-- the assistant makes it (the trigger) and removed when a person closes it
-- (store.CloseHandoffs, in the closure's transaction); the record of both is
-- conversation_events and handoff_closures, never this table.
-- The event's columns the list groups by are copied (they never change),
-- and its taker, so the list reads this table alone.
CREATE TABLE handoffs_open (
    conversation_event_id bigint      PRIMARY KEY REFERENCES conversation_events (id),
    conversation_id       text        NOT NULL,
    task_id               text,
    intent                text        NOT NULL,
    at                    timestamptz NOT NULL,
    -- taken_by and taken_at mirror its handoff_assignments row once taken.
    taken_by              bigint      REFERENCES users (id),
    taken_at              timestamptz
);
CREATE INDEX handoffs_open_conversation ON handoffs_open (conversation_id);

-- One row per conversation with open hand-offs, what the list shows and
-- every count counts (a conversation is one piece of work): id is its
-- first open hand-off's (the card's), last_id, intent and task_id its
-- latest's, taken_by its taker (any open hand-off assigned). Recomputed
-- from handoffs_open by handoff_queue_refresh whenever a conversation's
-- hand-offs are made, taken or closed, so the list reads a row a
-- conversation through its index, whatever was ever handed off.
CREATE TABLE handoff_queue (
    conversation_id text        PRIMARY KEY,
    id              bigint      NOT NULL,
    last_id         bigint      NOT NULL,
    n               integer     NOT NULL,
    first_at        timestamptz NOT NULL,
    last_at         timestamptz NOT NULL,
    intent          text        NOT NULL,
    task_id         text,
    taken_by        bigint      REFERENCES users (id),
    taken_at        timestamptz,
    taken           integer     GENERATED ALWAYS AS ((taken_by IS NOT NULL)::int) STORED
);
CREATE INDEX handoff_queue_order ON handoff_queue (taken, first_at, id);

-- handoff_queue_refresh recomputes the queue rows of conversations from
-- their open hand-offs, under a lock per conversation taken in id order,
-- so two transactions changing one conversation at once both count (each
-- statement reads what committed before it).
-- +goose StatementBegin
CREATE FUNCTION handoff_queue_refresh(ids text[]) RETURNS void LANGUAGE plpgsql AS $$
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

-- Backfill before the trigger exists: no hand-off is closed yet.
INSERT INTO handoffs_open (conversation_event_id, conversation_id, task_id, intent, at, taken_by, taken_at)
SELECT e.id, e.conversation_id, e.task_id, e.intent, e.at, h.user_id, h.taken_at
FROM conversation_events e LEFT JOIN handoff_assignments h ON h.conversation_event_id = e.id
WHERE e.mode = 'handed_off';
SELECT handoff_queue_refresh(array_agg(DISTINCT conversation_id)) FROM handoffs_open;

-- +goose StatementBegin
CREATE FUNCTION conversation_events_handoffs_open() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids text[];
BEGIN
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
CREATE TRIGGER conversation_events_handoffs_open AFTER INSERT ON conversation_events REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION conversation_events_handoffs_open();

-- +goose Down
DROP TRIGGER conversation_events_handoffs_open ON conversation_events;
DROP FUNCTION conversation_events_handoffs_open();
DROP FUNCTION handoff_queue_refresh(text[]);
DROP TABLE handoff_queue;
DROP TABLE handoffs_open;
DROP TABLE handoff_closures;
