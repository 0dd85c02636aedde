-- +goose Up
-- Guards an assistant must not walk around (issue 11, item 3).

-- Who paused a task: a pause by a person (a console user, the customer) is
-- lifted only by a person; an assistant may resume only an assistant's
-- pause. Cleared when the task is resumed.
ALTER TABLE tasks
    ADD COLUMN paused_by_kind text CHECK (paused_by_kind IN ('customer', 'user', 'assistant', 'policy', 'system')),
    ADD COLUMN paused_by_id   text;

-- Tasks paused before this migration take their pauser from the audit trail.
UPDATE tasks t SET paused_by_kind = e.actor_kind, paused_by_id = e.actor_id
FROM (SELECT DISTINCT ON (task_id) task_id, actor_kind, actor_id
      FROM events WHERE action = 'task.paused' AND task_id IS NOT NULL
      ORDER BY task_id, id DESC) e
WHERE t.id = e.task_id AND t.state = 'paused';

-- A conversation id belongs to the assistant that used it first (for a task
-- or a conversation event); to any other assistant it does not exist.
CREATE TABLE conversations (
    id           text        PRIMARY KEY,
    assistant_id text        NOT NULL REFERENCES assistants (id),
    created_at   timestamptz NOT NULL
);

INSERT INTO conversations (id, assistant_id, created_at)
SELECT DISTINCT ON (conversation_id) conversation_id, assistant_id, at
FROM (SELECT conversation_id, assistant_id, created_at AS at FROM tasks WHERE assistant_id IS NOT NULL
      UNION ALL
      SELECT conversation_id, assistant_id, at FROM conversation_events) used
ORDER BY conversation_id, at;

-- Duplicate proposals are found within their task.
CREATE INDEX invocations_dedup_task ON invocations (task_id, system, action, args_hash, created_at);

-- +goose Down
DROP INDEX invocations_dedup_task;
DROP TABLE conversations;
ALTER TABLE tasks DROP COLUMN paused_by_id, DROP COLUMN paused_by_kind;
