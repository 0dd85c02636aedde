-- +goose Up
-- Task events are announced by the console after their transaction commits
-- (store.Tx.Notify), no longer by a trigger inside it: PostgreSQL serialises
-- the commits of transactions that sent NOTIFY across their WAL flush, so the
-- trigger made every write's commits wait their turn for the disk.
DROP TRIGGER events_notify_task ON events;
DROP FUNCTION events_notify_task();

-- +goose Down
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
