-- +goose Up
-- Passkeys for staff (issue 34): a passkey is a factor of kind 'passkey'
-- (staff_factors holds its person, when it was added and last used; it is
-- confirmed at once, since registering it proves it works) with its
-- WebAuthn credential record here.
ALTER TABLE staff_factors DROP CONSTRAINT staff_factors_kind_check;
ALTER TABLE staff_factors ADD CONSTRAINT staff_factors_kind_check CHECK (kind IN ('totp', 'passkey'));

-- The WebAuthn user handle of a person: random, stable, never shown, so
-- an authenticator learns nothing of the account from it.
CREATE TABLE webauthn_user_handles (
    user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    handle  bytea  NOT NULL UNIQUE
);

-- The credential record. sign_count only grows: an assertion whose counter
-- is not above it is refused (a cloned authenticator), by the one UPDATE
-- that records the new count. flags keeps the backup-eligible bit the
-- assertions are checked against.
CREATE TABLE passkeys (
    factor_id          bigint  PRIMARY KEY REFERENCES staff_factors (id) ON DELETE CASCADE,
    credential_id      bytea   NOT NULL UNIQUE,
    public_key         bytea   NOT NULL,
    sign_count         bigint  NOT NULL CHECK (sign_count >= 0),
    transports         text[]  NOT NULL DEFAULT '{}',
    aaguid             bytea   NOT NULL,
    flags              smallint NOT NULL,
    attestation_format text    NOT NULL,
    name               text    NOT NULL CHECK (length(name) BETWEEN 1 AND 60)
);

-- A WebAuthn ceremony between its options and the browser's answer: the
-- library's session data (the challenge), kept on the server under the
-- SHA-256 of an id held in the person's console session. Taking it
-- deletes it (single use); it lasts five minutes.
CREATE TABLE webauthn_ceremonies (
    id_hash    bytea       PRIMARY KEY,
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    purpose    text        NOT NULL CHECK (purpose IN ('register', 'sign_in')),
    session    jsonb       NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX webauthn_ceremonies_expiry ON webauthn_ceremonies (expires_at);

-- +goose Down
DROP TABLE webauthn_ceremonies;
DROP TABLE passkeys;
DROP TABLE webauthn_user_handles;
DELETE FROM staff_factors WHERE kind = 'passkey';
ALTER TABLE staff_factors DROP CONSTRAINT staff_factors_kind_check;
ALTER TABLE staff_factors ADD CONSTRAINT staff_factors_kind_check CHECK (kind IN ('totp'));
