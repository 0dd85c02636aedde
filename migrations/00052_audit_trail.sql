-- +goose Up
-- The verifiable trail (issue 39): every event, and every invocation's
-- creation and change of state, becomes a leaf of an append-only RFC 6962
-- Merkle log. A leaf is appended by a trigger in the transaction of the
-- change, so no code path can skip it and a failure to append fails the
-- change. The console signs checkpoints of the tree (internal/audit).
--
-- The head row is the tree's size: appending takes its row lock, so leaf
-- indexes are gapless and in commit order. The triggers are deferred to
-- the commit, so the lock is held only from the append to the commit's end.
CREATE TABLE trail_head (
    one       boolean     PRIMARY KEY DEFAULT true CHECK (one),
    size      bigint      NOT NULL,
    logged_at timestamptz NOT NULL
);
INSERT INTO trail_head VALUES (true, 0, '-infinity');

-- A leaf's hash is SHA-256(0x00 || entry), entry being the canonical JSON
-- text of the row as stored with the leaf's logged_at. An event's entry is
-- computed again from its row when read (so a changed row no longer
-- matches); an invocation's entry is kept here, since the row moves on.
CREATE TABLE trail_leaves (
    idx       bigint      PRIMARY KEY CHECK (idx >= 0),
    kind      text        NOT NULL CHECK (kind IN ('event', 'invocation')),
    ref       text        NOT NULL,
    logged_at timestamptz NOT NULL,
    entry     text        CHECK ((kind = 'invocation') = (entry IS NOT NULL)),
    hash      bytea       NOT NULL CHECK (length(hash) = 32)
);
CREATE INDEX trail_leaves_ref ON trail_leaves (kind, ref);
CREATE INDEX trail_leaves_logged_at ON trail_leaves (logged_at);

-- Signed checkpoints (C2SP signed notes), one per tree size, with the
-- tree's compact range at that size (so the next one hashes only the
-- leaves appended since).
CREATE TABLE trail_checkpoints (
    size      bigint      PRIMARY KEY CHECK (size > 0),
    root      bytea       NOT NULL CHECK (length(root) = 32),
    compact   bytea[]     NOT NULL,
    signed_at timestamptz NOT NULL,
    note      text        NOT NULL
);

CREATE TRIGGER trail_leaves_no_update BEFORE UPDATE OR DELETE ON trail_leaves FOR EACH ROW EXECUTE FUNCTION events_append_only();
CREATE TRIGGER trail_leaves_no_truncate BEFORE TRUNCATE ON trail_leaves FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();
CREATE TRIGGER trail_checkpoints_no_update BEFORE UPDATE OR DELETE ON trail_checkpoints FOR EACH ROW EXECUTE FUNCTION events_append_only();
REVOKE UPDATE, DELETE, TRUNCATE ON trail_leaves, trail_checkpoints FROM PUBLIC;

-- +goose StatementBegin
CREATE FUNCTION trail_time(t timestamptz) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION trail_event_entry(e events, logged_at timestamptz) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('kind', 'event', 'logged_at', trail_time(logged_at), 'id', e.id, 'at', trail_time(e.at),
        'actor_kind', e.actor_kind, 'actor_id', e.actor_id, 'action', e.action, 'task_id', e.task_id,
        'invocation_id', e.invocation_id, 'data', e.data)::text
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION trail_invocation_entry(i invocations, logged_at timestamptz) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('kind', 'invocation', 'logged_at', trail_time(logged_at), 'id', i.id, 'task_id', i.task_id,
        'system', i.system, 'action', i.action, 'state', i.state, 'version', i.version,
        'args_hash', encode(i.args_hash, 'hex'), 'approved_args_hash', encode(i.approved_args_hash, 'hex'),
        'amount_cents', i.amount_cents)::text
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION trail_append() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    i bigint;
    t timestamptz;
    e text;
BEGIN
    -- The head is held only by commits in progress: a transaction's short
    -- lock_timeout (store.Tx.LockTimeout, meant for rows a frozen console
    -- may hold) must not fail its commit because another commit is ahead.
    PERFORM set_config('lock_timeout', '0', true);
    UPDATE trail_head SET size = size + 1, logged_at = greatest(clock_timestamp(), logged_at)
    RETURNING size - 1, logged_at INTO i, t;
    IF TG_TABLE_NAME = 'events' THEN
        INSERT INTO trail_leaves (idx, kind, ref, logged_at, hash)
        VALUES (i, 'event', NEW.id::text, t, sha256('\x00'::bytea || convert_to(trail_event_entry(NEW, t), 'UTF8')));
    ELSE
        e := trail_invocation_entry(NEW, t);
        INSERT INTO trail_leaves (idx, kind, ref, logged_at, entry, hash)
        VALUES (i, 'invocation', NEW.id, t, e, sha256('\x00'::bytea || convert_to(e, 'UTF8')));
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE CONSTRAINT TRIGGER events_trail AFTER INSERT ON events
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION trail_append();
CREATE CONSTRAINT TRIGGER invocations_trail_insert AFTER INSERT ON invocations
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION trail_append();
CREATE CONSTRAINT TRIGGER invocations_trail_state AFTER UPDATE OF state ON invocations
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION trail_append();

-- What was recorded before the trail existed enters it first, in order.
INSERT INTO trail_leaves (idx, kind, ref, logged_at, hash)
SELECT row_number() OVER (ORDER BY e.id) - 1, 'event', e.id::text, now(),
       sha256('\x00'::bytea || convert_to(trail_event_entry(e, now()), 'UTF8'))
FROM events e;
INSERT INTO trail_leaves (idx, kind, ref, logged_at, entry, hash)
SELECT (SELECT count(*) FROM trail_leaves) + row_number() OVER (ORDER BY i.seq) - 1, 'invocation', i.id, now(),
       trail_invocation_entry(i, now()), sha256('\x00'::bytea || convert_to(trail_invocation_entry(i, now()), 'UTF8'))
FROM invocations i;
UPDATE trail_head SET size = (SELECT count(*) FROM trail_leaves), logged_at = now();

-- +goose Down
DROP TRIGGER invocations_trail_state ON invocations;
DROP TRIGGER invocations_trail_insert ON invocations;
DROP TRIGGER events_trail ON events;
DROP FUNCTION trail_append();
DROP FUNCTION trail_invocation_entry(invocations, timestamptz);
DROP FUNCTION trail_event_entry(events, timestamptz);
DROP FUNCTION trail_time(timestamptz);
DROP TABLE trail_checkpoints;
DROP TABLE trail_leaves;
DROP TABLE trail_head;
