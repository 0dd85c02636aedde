-- +goose Up
-- The adapters' own request ledger: one row per idempotency key and system,
-- written before a write leaves, so a repeated key sends nothing and a lost
-- response can be inspected later. Business systems' POSTs are not
-- idempotent; this table is what makes our calls so.
CREATE TABLE adapter_requests (
    system          text        NOT NULL,
    idempotency_key text        NOT NULL,
    action          text        NOT NULL,
    target_id       text        NOT NULL,
    args_hash       bytea       NOT NULL,
    state           text        NOT NULL CHECK (state IN ('sending', 'applied', 'refused', 'unknown')),
    result          jsonb,
    error           jsonb,
    created_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    PRIMARY KEY (system, idempotency_key)
);
CREATE INDEX adapter_requests_target ON adapter_requests (system, action, target_id, created_at);

-- +goose Down
DROP TABLE adapter_requests;
