-- +goose Up
-- Outcome webhooks: an assistant's HTTPS endpoint, told when one of its
-- invocations is decided or settles. Number 00015, not 00014: another branch
-- may take 00014 at the same time.

-- The secret signs every delivery, so it is kept as it is (it cannot be a
-- hash); the console shows it once, when the endpoint is registered.
CREATE TABLE assistant_webhooks (
    id            text        PRIMARY KEY,
    assistant_id  text        NOT NULL REFERENCES assistants (id),
    url           text        NOT NULL CHECK (url <> ''),
    secret        text        NOT NULL CHECK (secret <> ''),
    -- from_event_id: events up to this id happened before the endpoint
    -- existed and are never delivered to it.
    from_event_id bigint      NOT NULL,
    created_by    bigint      REFERENCES users (id),
    created_at    timestamptz NOT NULL,
    removed_at    timestamptz
);
-- One live endpoint per assistant; registering again replaces it.
CREATE UNIQUE INDEX assistant_webhooks_live ON assistant_webhooks (assistant_id) WHERE removed_at IS NULL;

-- One delivery per (endpoint, event): instances that enqueue the same event
-- at once insert it once.
CREATE TABLE webhook_deliveries (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id      text        NOT NULL REFERENCES assistant_webhooks (id),
    event_id        bigint      NOT NULL REFERENCES events (id),
    event           text        NOT NULL,
    invocation_id   text        NOT NULL,
    -- payload is json, not jsonb: the bytes signed are the bytes enqueued.
    payload         json        NOT NULL,
    state           text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        int         NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL,
    -- retry_until: after a failed attempt past this time the delivery is
    -- given up (a day after it was enqueued or resent).
    retry_until     timestamptz NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    lease_token     text,
    lease_until     timestamptz,
    finished_at     timestamptz,
    UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_invocation ON webhook_deliveries (webhook_id, invocation_id, event_id);

-- Every attempt and what the endpoint answered.
CREATE TABLE webhook_attempts (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id bigint      NOT NULL REFERENCES webhook_deliveries (id),
    at          timestamptz NOT NULL,
    status      int,
    -- body: the first 1 KiB of the response.
    body        text        NOT NULL DEFAULT '',
    error       text        NOT NULL DEFAULT ''
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

-- The enqueuer's watermark: the highest event id it has read (its own row,
-- so that rebuilding the metrics does not move it).
CREATE TABLE webhook_watermark (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    last_id  bigint  NOT NULL
);
INSERT INTO webhook_watermark (last_id) SELECT coalesce(max(id), 0) FROM events;

-- +goose Down
DROP TABLE webhook_watermark;
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE assistant_webhooks;
