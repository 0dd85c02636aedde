-- +goose Up
-- Staff sign in through the business's OpenID provider (issue 34). A person
-- is known by the provider's (issuer, subject) pair, never by an e-mail the
-- provider sends: the first sign-in creates the console account, every
-- later one finds it by the pair and sets its role from the groups again.
CREATE TABLE staff_identities (
    issuer          text        NOT NULL CHECK (issuer <> ''),
    subject         text        NOT NULL CHECK (subject <> ''),
    user_id         bigint      NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
    groups          text[]      NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL,
    last_sign_in_at timestamptz NOT NULL,
    PRIMARY KEY (issuer, subject)
);

-- One row per sign-in begun: the state sent to the provider (stored as its
-- SHA-256), the browser it was sent from (the SHA-256 of a cookie only that
-- browser holds), the nonce the ID token must carry and the PKCE verifier.
-- The callback deletes the row it uses, so a state works once; a row older
-- than expires_at works never and is swept.
CREATE TABLE sso_sign_ins (
    state_hash    bytea       PRIMARY KEY,
    browser_hash  bytea       NOT NULL,
    nonce         text        NOT NULL,
    code_verifier text        NOT NULL,
    next_path     text        NOT NULL,
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL
);
CREATE INDEX sso_sign_ins_expires ON sso_sign_ins (expires_at);

-- +goose Down
DROP TABLE sso_sign_ins;
DROP TABLE staff_identities;
