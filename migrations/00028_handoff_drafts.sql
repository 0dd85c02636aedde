-- +goose Up
-- What became of the write an assistant prepared in a hand-off
-- (would_propose): sent on by the person holding the conversation, as
-- their own proposal (invocation_id, set once the proposal is made), or
-- discarded. One row per hand-off event, written under the conversation's
-- lock before the proposal: the primary key makes a draft sent once, and
-- never after it was discarded.
CREATE TABLE handoff_drafts (
    conversation_event_id bigint      PRIMARY KEY REFERENCES conversation_events (id),
    outcome               text        NOT NULL CHECK (outcome IN ('sent', 'discarded')),
    invocation_id         text,
    user_id               bigint      NOT NULL REFERENCES users (id),
    at                    timestamptz NOT NULL
);

-- +goose Down
DROP TABLE handoff_drafts;
