-- +goose Up
-- Step-up (issue 34): a policy may ask every staff approval of its action,
-- or those above an amount, for a fresh passkey assertion made for that
-- decision. Existing and new policies keep it off.
ALTER TABLE policies ADD COLUMN step_up_every boolean NOT NULL DEFAULT false;
ALTER TABLE policies ADD COLUMN step_up_above_cents bigint NULL CHECK (step_up_above_cents >= 0);

-- The assertion an approver's passkey made for one approval, kept with it:
-- the request, the version approved and the arguments' hash approved (what
-- the challenge was derived from, internal/stepup), who approved, and
-- everything needed to check the signature offline. One per approver of a
-- request: the two approvers of separation of duties each keep their own.
CREATE TABLE step_up_assertions (
    invocation_id      text        NOT NULL REFERENCES invocations (id),
    user_id            bigint      NOT NULL REFERENCES users (id),
    version            integer     NOT NULL,
    args_hash          bytea       NOT NULL,
    credential_id      bytea       NOT NULL,
    public_key         bytea       NOT NULL,
    rp_id              text        NOT NULL,
    origin             text        NOT NULL,
    authenticator_data bytea       NOT NULL,
    client_data_json   bytea       NOT NULL,
    signature          bytea       NOT NULL,
    created_at         timestamptz NOT NULL,
    PRIMARY KEY (invocation_id, user_id)
);

-- +goose Down
DROP TABLE step_up_assertions;
ALTER TABLE policies DROP COLUMN step_up_above_cents;
ALTER TABLE policies DROP COLUMN step_up_every;
