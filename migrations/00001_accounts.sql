-- +goose Up
CREATE TABLE users (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email         text        NOT NULL CHECK (email = lower(email) AND email LIKE '%_@_%'),
    name          text        NOT NULL CHECK (name <> ''),
    role          text        NOT NULL CHECK (role IN ('customer', 'agent', 'manager', 'admin')),
    password_hash text        NOT NULL,
    disabled_at   timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (email);

-- The cookie holds a random id; only its SHA-256 is stored, so reading this
-- table does not let anyone take over a session.
CREATE TABLE sessions (
    id_hash      bytea       PRIMARY KEY,
    user_id      bigint      REFERENCES users (id),
    csrf_token   text        NOT NULL,
    data         bytea       NOT NULL DEFAULT '',
    ip           text        NOT NULL DEFAULT '',
    user_agent   text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    revoked_at   timestamptz
);
CREATE INDEX sessions_user_live ON sessions (user_id) WHERE revoked_at IS NULL;
CREATE INDEX sessions_last_seen ON sessions (last_seen_at);

CREATE TABLE sign_in_failures (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account text        NOT NULL,
    ip      text        NOT NULL,
    at      timestamptz NOT NULL
);
CREATE INDEX sign_in_failures_account ON sign_in_failures (account, at);
CREATE INDEX sign_in_failures_ip ON sign_in_failures (ip, at);

-- +goose Down
DROP TABLE sign_in_failures;
DROP TABLE sessions;
DROP TABLE users;
