-- +goose Up
-- Second factors for staff (issue 34). A person's factors are rows of
-- staff_factors, one per authenticator, whatever its kind; what a kind
-- needs of its own lives in a table of that kind keyed by the factor (TOTP
-- here; passkeys add theirs and widen the kind check). A factor counts only
-- once confirmed: an authenticator app by a valid code, so a secret that
-- never reached the phone locks nobody out.
CREATE TABLE staff_factors (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id      bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind         text        NOT NULL CHECK (kind IN ('totp')),
    created_at   timestamptz NOT NULL,
    confirmed_at timestamptz,
    last_used_at timestamptz
);
-- One authenticator app per person: setting up another replaces it.
CREATE UNIQUE INDEX staff_factors_one_totp ON staff_factors (user_id) WHERE kind = 'totp';

-- The TOTP secret, sealed with the console's factor key (AES-256-GCM, the
-- user id bound in as additional data), never in the clear. last_step is
-- the time step of the last code accepted: a code is accepted only for a
-- later step, in one UPDATE, so a code (or an earlier one) used once is
-- refused for the rest of its window, even when two requests race.
CREATE TABLE totp_secrets (
    factor_id     bigint PRIMARY KEY REFERENCES staff_factors (id) ON DELETE CASCADE,
    secret_sealed bytea  NOT NULL,
    last_step     bigint
);

-- Recovery codes: shown once, kept as a keyed hash (HMAC with the factor
-- key), each spent by the one UPDATE that marks it used.
CREATE TABLE factor_recovery_codes (
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash  bytea       NOT NULL,
    created_at timestamptz NOT NULL,
    used_at    timestamptz,
    PRIMARY KEY (user_id, code_hash)
);

-- The roles whose password sign-ins must be followed by a second factor,
-- set by an admin (audited in events). A role without a row requires none.
CREATE TABLE role_factor_requirements (
    role       text        PRIMARY KEY CHECK (role IN ('agent', 'manager', 'admin')),
    required   boolean     NOT NULL,
    changed_by bigint      REFERENCES users (id),
    changed_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE role_factor_requirements;
DROP TABLE factor_recovery_codes;
DROP TABLE totp_secrets;
DROP TABLE staff_factors;
