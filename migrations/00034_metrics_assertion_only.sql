-- +goose Up
-- Only the business vouches for a customer (trust round four, R1). A task
-- opened on an assistant's own any-customer grant names a customer nobody
-- vouched for, so it no longer makes its conversation's events count in
-- the metrics; only a task whose customer a signed assertion vouched for
-- does (or the admin's reports_without_task grant, read with the
-- roll-ups). Migration 00029 counted both kinds of task.

-- A task opened since the events were folded makes them count only when an
-- assertion vouched for it, so only such a task lists its conversation to
-- be folded again.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tasks_metrics_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO metrics_conversations_stale (conversation_id)
    SELECT DISTINCT conversation_id FROM new_rows WHERE assistant_id IS NOT NULL AND vouched = 'assertion';
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- The conversation roll-ups are derived data, folded with the old rule:
-- fold every conversation again under the new one at the next refresh.
DELETE FROM metrics_conversation_daily;
DELETE FROM metrics_conversations;
UPDATE metrics_watermarks SET last_id = 0 WHERE name = 'conversation_events';

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tasks_metrics_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO metrics_conversations_stale (conversation_id)
    SELECT DISTINCT conversation_id FROM new_rows WHERE assistant_id IS NOT NULL AND vouched IS NOT NULL;
    RETURN NULL;
END $$;
-- +goose StatementEnd
DELETE FROM metrics_conversation_daily;
DELETE FROM metrics_conversations;
UPDATE metrics_watermarks SET last_id = 0 WHERE name = 'conversation_events';
