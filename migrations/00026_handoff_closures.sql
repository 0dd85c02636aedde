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

-- Backfill before the trigger exists: no hand-off is closed yet.
INSERT INTO handoffs_open (conversation_event_id, conversation_id, task_id, intent, at, taken_by, taken_at)
SELECT e.id, e.conversation_id, e.task_id, e.intent, e.at, h.user_id, h.taken_at
FROM conversation_events e LEFT JOIN handoff_assignments h ON h.conversation_event_id = e.id
WHERE e.mode = 'handed_off';

-- +goose StatementBegin
CREATE FUNCTION conversation_events_handoffs_open() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO handoffs_open (conversation_event_id, conversation_id, task_id, intent, at)
    SELECT id, conversation_id, task_id, intent, at FROM new_rows WHERE mode = 'handed_off';
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER conversation_events_handoffs_open AFTER INSERT ON conversation_events REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION conversation_events_handoffs_open();

-- +goose Down
DROP TRIGGER conversation_events_handoffs_open ON conversation_events;
DROP FUNCTION conversation_events_handoffs_open();
DROP TABLE handoffs_open;
DROP TABLE handoff_closures;
