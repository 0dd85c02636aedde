-- +goose Up
-- Passkeys for returning customers (issue 35). A customer is who the
-- business system says (system + customer reference, as the confirmation
-- links name them), not a console account, so their passkeys are per
-- shop: a passkey added for one system decides nothing of another's.

-- The WebAuthn user handle of a customer of one system: random, stable,
-- never shown, so an authenticator learns nothing of the customer from it.
CREATE TABLE customer_webauthn_handles (
    system       text  NOT NULL,
    customer_ref text  NOT NULL,
    handle       bytea NOT NULL UNIQUE,
    PRIMARY KEY (system, customer_ref)
);

-- The credential record. sign_count only grows, by the one UPDATE that
-- records a use; flags keeps the backup-eligible bit assertions are
-- checked against. proof is how the customer had proved who they are
-- when they added it ('link', 'assertion' or 'account'; never a typed
-- code).
CREATE TABLE customer_passkeys (
    id                 bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    system             text        NOT NULL,
    customer_ref       text        NOT NULL,
    credential_id      bytea       NOT NULL UNIQUE,
    public_key         bytea       NOT NULL,
    sign_count         bigint      NOT NULL CHECK (sign_count >= 0),
    transports         text[]      NOT NULL DEFAULT '{}',
    aaguid             bytea       NOT NULL,
    flags              smallint    NOT NULL,
    attestation_format text        NOT NULL,
    proof              text        NOT NULL CHECK (proof IN ('link', 'assertion', 'account')),
    created_at         timestamptz NOT NULL,
    last_used_at       timestamptz,
    FOREIGN KEY (system, customer_ref) REFERENCES customer_webauthn_handles (system, customer_ref) ON DELETE CASCADE
);
CREATE INDEX customer_passkeys_customer ON customer_passkeys (system, customer_ref);

-- A customer's WebAuthn ceremony between its options and the browser's
-- answer, as webauthn_ceremonies is for staff (which is keyed by a console
-- account): the library's session data under the SHA-256 of an id held in
-- the browser's session, for one customer of one system and one request.
-- Taking it deletes it (single use); it lasts five minutes.
CREATE TABLE customer_webauthn_ceremonies (
    id_hash       bytea       PRIMARY KEY,
    system        text        NOT NULL,
    customer_ref  text        NOT NULL,
    invocation_id text        NOT NULL,
    purpose       text        NOT NULL CHECK (purpose IN ('register', 'decide')),
    session       jsonb       NOT NULL,
    expires_at    timestamptz NOT NULL
);
CREATE INDEX customer_webauthn_ceremonies_expiry ON customer_webauthn_ceremonies (expires_at);

-- +goose Down
DROP TABLE customer_webauthn_ceremonies;
DROP TABLE customer_passkeys;
DROP TABLE customer_webauthn_handles;
