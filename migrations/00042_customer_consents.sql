-- +goose Up
-- The consent of a customer's decision (issue 35): recorded in the
-- transaction of every confirmation and decline, it says what the customer
-- was shown (the quote as stored, its version and canonical SHA-256, and
-- the hash of the arguments it was made from), how they proved who they
-- are, what they decided, and, when they used a passkey, the assertion
-- whose challenge is derived from all of it (internal/consent). A
-- request is decided once, so one row per request. The receipt carries it.
CREATE TABLE customer_consents (
    invocation_id      text        PRIMARY KEY REFERENCES invocations (id),
    customer_ref       text        NOT NULL,
    proof              text        NOT NULL CHECK (proof <> ''),
    decision           text        NOT NULL CHECK (decision IN ('confirm', 'decline')),
    quote_version      integer     NOT NULL,
    quote_digest       bytea       NOT NULL CHECK (length(quote_digest) = 32),
    quote              json        NOT NULL,
    args_hash          bytea       NOT NULL,
    credential_id      bytea       NULL,
    public_key         bytea       NULL,
    rp_id              text        NULL,
    origin             text        NULL,
    authenticator_data bytea       NULL,
    client_data_json   bytea       NULL,
    signature          bytea       NULL,
    decided_at         timestamptz NOT NULL,
    CHECK ((credential_id IS NULL) = (signature IS NULL))
);

-- +goose Down
DROP TABLE customer_consents;
