-- +goose Up
-- Assistants are programs that call the API and the MCP server.
CREATE TABLE assistants (
    id          text        PRIMARY KEY,
    name        text        NOT NULL CHECK (name <> ''),
    created_by  bigint      REFERENCES users (id),
    created_at  timestamptz NOT NULL,
    disabled_at timestamptz
);
CREATE UNIQUE INDEX assistants_name ON assistants (lower(name));

-- Bearer keys: shown once, stored as SHA-256, revocable.
CREATE TABLE api_keys (
    id           text        PRIMARY KEY,
    assistant_id text        NOT NULL REFERENCES assistants (id),
    prefix       text        NOT NULL,
    hash         bytea       NOT NULL UNIQUE,
    created_by   bigint      REFERENCES users (id),
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_keys_assistant ON api_keys (assistant_id);

-- The second of the catalog's three filters (connected, turned on by the
-- assistant, left on by policy): which actions each assistant has turned on,
-- per system.
CREATE TABLE assistant_actions (
    assistant_id text    NOT NULL REFERENCES assistants (id),
    system       text    NOT NULL,
    action       text    NOT NULL,
    enabled      boolean NOT NULL DEFAULT true,
    PRIMARY KEY (assistant_id, system, action)
);

-- What the assistant did with each request: the raw material of the
-- containment, clarification and hand-off metrics.
CREATE TABLE conversation_events (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conversation_id text        NOT NULL,
    assistant_id    text        NOT NULL REFERENCES assistants (id),
    task_id         text        REFERENCES tasks (id),
    intent          text        NOT NULL CHECK (intent IN ('informational', 'diagnostic', 'navigational',
                        'transactional_low', 'transactional_high', 'ambiguous', 'out_of_scope')),
    mode            text        NOT NULL CHECK (mode IN ('answered', 'read_and_answered', 'linked', 'clarified',
                        'proposed', 'executed', 'handed_off', 'resolved')),
    at              timestamptz NOT NULL,
    data            jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX conversation_events_conversation ON conversation_events (conversation_id, at);
CREATE INDEX conversation_events_at ON conversation_events (at);

ALTER TABLE tasks ADD CONSTRAINT tasks_assistant FOREIGN KEY (assistant_id) REFERENCES assistants (id);

-- +goose Down
ALTER TABLE tasks DROP CONSTRAINT tasks_assistant;
DROP TABLE conversation_events;
DROP TABLE assistant_actions;
DROP TABLE api_keys;
DROP TABLE assistants;
