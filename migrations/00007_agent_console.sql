-- +goose Up
-- The support agent's console: who holds a card of the approval queue, the
-- first of two approvals above a policy's second-approver amount, and who
-- took a conversation the assistant handed to a person.

-- An agent who opens a card for deciding holds it until expires_at; another
-- agent sees the holder. One row per invocation, taken or renewed by a
-- guarded upsert (only when free, expired, or already the same agent's).
CREATE TABLE approval_claims (
    invocation_id text        PRIMARY KEY REFERENCES invocations (id),
    user_id       bigint      NOT NULL REFERENCES users (id),
    claimed_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL
);
CREATE INDEX approval_claims_user ON approval_claims (user_id, expires_at);

-- Approvals recorded on an invocation that needs two different approvers.
-- The primary key makes one person's second click a no-op, never a second
-- approval.
CREATE TABLE invocation_approvals (
    invocation_id text        NOT NULL REFERENCES invocations (id),
    user_id       bigint      NOT NULL REFERENCES users (id),
    args_hash     bytea       NOT NULL,
    at            timestamptz NOT NULL,
    PRIMARY KEY (invocation_id, user_id)
);

-- A hand-off taken by a person. One row per conversation event.
CREATE TABLE handoff_assignments (
    conversation_event_id bigint      PRIMARY KEY REFERENCES conversation_events (id),
    user_id               bigint      NOT NULL REFERENCES users (id),
    taken_at              timestamptz NOT NULL
);

-- Notifications already sent: (invocation, kind) is claimed by one console
-- instance before it sends, so several instances notify once.
CREATE TABLE notifications_sent (
    invocation_id text        NOT NULL REFERENCES invocations (id),
    kind          text        NOT NULL CHECK (kind IN ('arrived', 'deadline', 'unverified')),
    at            timestamptz NOT NULL,
    PRIMARY KEY (invocation_id, kind)
);

-- The approval queue reads pending approvals newest deadline first and pages
-- by (deadline_at, id): this index serves both without a sort.
CREATE INDEX invocations_approval_queue ON invocations (deadline_at DESC, id DESC)
    WHERE state = 'awaiting_approval';
-- Notices of cards that just arrived look up recent pending approvals.
CREATE INDEX invocations_awaiting_created ON invocations (created_at) WHERE state = 'awaiting_approval';
CREATE INDEX conversation_events_handed_off ON conversation_events (at DESC, id DESC)
    WHERE mode = 'handed_off';

-- Live task views: every event of a task wakes the consoles watching it
-- (LISTEN countersign_task_events; the payload is the task id), so several
-- console instances show the same moment.
-- +goose StatementBegin
CREATE FUNCTION events_notify_task() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.task_id IS NOT NULL THEN
        PERFORM pg_notify('countersign_task_events', NEW.task_id);
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER events_notify_task AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION events_notify_task();

-- +goose Down
DROP TRIGGER events_notify_task ON events;
DROP FUNCTION events_notify_task();
DROP INDEX conversation_events_handed_off;
DROP INDEX invocations_awaiting_created;
DROP INDEX invocations_approval_queue;
DROP TABLE notifications_sent;
DROP TABLE handoff_assignments;
DROP TABLE invocation_approvals;
DROP TABLE approval_claims;
