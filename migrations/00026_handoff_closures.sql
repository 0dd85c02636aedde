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

-- The hand-off page, the assistant's GET and the lock that serialises two
-- people read a conversation's events through conversation_events_conversation;
-- the list reads the hand-offs through conversation_events_handed_off.

-- +goose Down
DROP TABLE handoff_closures;
