-- +goose Up
-- What an assistant reports is labelled as its report (issue 32). A
-- conversation's events count in the manager's metrics only when the
-- conversation has a task of the same assistant whose customer the business
-- vouched for, or when an admin let that assistant's reports count without
-- one; the others are kept and shown apart, never in a headline figure.

-- How the business stood behind a task's customer when it opened: a signed
-- assertion, or the assistant's any-customer grant. NULL for a task of no
-- assistant, and for tasks opened before vouching existed (migration 00020),
-- which therefore do not vouch for their conversations' reports.
ALTER TABLE tasks ADD COLUMN vouched text CHECK (vouched IN ('assertion', 'any_customer'));
UPDATE tasks t SET vouched = e.data->'vouched'->>'by'
FROM events e
WHERE e.task_id = t.id AND e.action = 'task.created' AND t.assistant_id IS NOT NULL
    AND e.data->'vouched'->>'by' IN ('assertion', 'any_customer');

-- An admin's grant: the assistant's reports count in the metrics without a
-- vouched task (an assistant that only answers questions and never opens
-- one). Off for every assistant until an admin turns it on.
ALTER TABLE assistants ADD COLUMN reports_without_task boolean NOT NULL DEFAULT false;

-- Each folded conversation says whether it counts (a vouched task of its
-- assistant) and how many events the assistant reported on it. The grant is
-- applied when the roll-ups are read, so turning it on or off changes the
-- figures at once.
ALTER TABLE metrics_conversations
    ADD COLUMN counted boolean NOT NULL DEFAULT false,
    ADD COLUMN events  bigint  NOT NULL DEFAULT 0;
ALTER TABLE metrics_conversation_daily
    ADD COLUMN counted boolean NOT NULL DEFAULT false,
    ADD COLUMN events  bigint  NOT NULL DEFAULT 0,
    DROP CONSTRAINT metrics_conversation_daily_pkey,
    ADD PRIMARY KEY (day, intent, assistant_id, counted);

-- The conversation roll-ups are derived data: fold every conversation again
-- under the new rule at the next refresh.
DELETE FROM metrics_conversation_daily;
DELETE FROM metrics_conversations;
UPDATE metrics_watermarks SET last_id = 0 WHERE name = 'conversation_events';

-- Conversations to fold again at the next refresh although none of their
-- events is new: a vouched task opened for them after their events were
-- folded. No key, so a task opening never waits on a refresh that is
-- emptying the table; the refresh folds each conversation once however
-- often it is listed.
CREATE TABLE metrics_conversations_stale (
    conversation_id text NOT NULL
);

-- +goose StatementBegin
CREATE FUNCTION tasks_metrics_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO metrics_conversations_stale (conversation_id)
    SELECT DISTINCT conversation_id FROM new_rows WHERE assistant_id IS NOT NULL AND vouched IS NOT NULL;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER tasks_metrics_stale AFTER INSERT ON tasks REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION tasks_metrics_stale();

-- The bounds on conversation events (internal/assistants/event_limits.go):
-- one counter per bound and key (an assistant, or an assistant's
-- conversation) for the fixed window it is in. Counted in the database, so
-- every console instance and every racing request sees the same count.
CREATE TABLE conversation_event_windows (
    bound        text        NOT NULL,
    key          text        NOT NULL,
    window_start timestamptz NOT NULL,
    n            integer     NOT NULL CHECK (n >= 0),
    PRIMARY KEY (bound, key)
);

-- +goose Down
DROP TABLE conversation_event_windows;
DROP TRIGGER tasks_metrics_stale ON tasks;
DROP FUNCTION tasks_metrics_stale();
DROP TABLE metrics_conversations_stale;
DELETE FROM metrics_conversation_daily;
DELETE FROM metrics_conversations;
UPDATE metrics_watermarks SET last_id = 0 WHERE name = 'conversation_events';
ALTER TABLE metrics_conversation_daily
    DROP CONSTRAINT metrics_conversation_daily_pkey,
    DROP COLUMN events,
    DROP COLUMN counted,
    ADD PRIMARY KEY (day, intent, assistant_id);
ALTER TABLE metrics_conversations DROP COLUMN events, DROP COLUMN counted;
ALTER TABLE assistants DROP COLUMN reports_without_task;
ALTER TABLE tasks DROP COLUMN vouched;
