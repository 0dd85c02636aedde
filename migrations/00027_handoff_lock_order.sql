-- +goose Up
-- Hand-offs of one task made at once never deadlock, and each is counted.
--
-- Inserting a hand-off takes its task's row FOR KEY SHARE (the foreign
-- key's check); the task list's recount then took it FOR UPDATE, which
-- conflicts with another insert's KEY SHARE: two hand-offs of one task
-- each held the share the other's recount waited for (since 00023). And
-- 00026's queue refresh took the conversation's advisory lock before the
-- recount took the task, while taking a hand-off takes the task (its
-- assignment's recount) before the conversation's lock.
--
-- A recount now takes its tasks FOR NO KEY UPDATE: that still serialises
-- recounts (and the pauses and permits that take FOR UPDATE) but not the
-- foreign key's shares, and it is the lock the recount's UPDATE takes
-- anyway. And a hand-off's insert takes its task before its conversation,
-- in that one order everywhere: task rows (id order), then conversations
-- (id order). TestConcurrentHandoffsOfOneTaskAllCount races them.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION task_list_refresh(ids text[]) RETURNS void LANGUAGE sql AS $$
    SELECT 1 FROM tasks WHERE id = ANY(ids) ORDER BY id FOR NO KEY UPDATE;
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

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION conversation_events_handoffs_open() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids text[];
BEGIN
    -- The tasks first (the recount's lock, taken again there for free),
    -- then the conversations.
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

-- A manager takes over a conversation another person holds (who is away,
-- say), with a reason: one row per take-over, the record the hand-off page
-- and GET /api/v1/conversations/{id} read (who from whom, when, why);
-- handoff_assignments then names the new holder. handoff_id is the newest
-- open hand-off when it was taken over, which ties it to that round.
CREATE TABLE handoff_takeovers (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conversation_id text        NOT NULL,
    handoff_id      bigint      NOT NULL REFERENCES conversation_events (id),
    from_user_id    bigint      NOT NULL REFERENCES users (id),
    to_user_id      bigint      NOT NULL REFERENCES users (id),
    reason          text        NOT NULL,
    at              timestamptz NOT NULL
);
CREATE INDEX handoff_takeovers_conversation ON handoff_takeovers (conversation_id, at);

-- +goose Down
DROP TABLE handoff_takeovers;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION conversation_events_handoffs_open() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION task_list_refresh(ids text[]) RETURNS void LANGUAGE sql AS $$
    SELECT 1 FROM tasks WHERE id = ANY(ids) ORDER BY id FOR UPDATE;
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
