-- +goose Up
-- The console as the OAuth 2.1 authorization server of its own MCP
-- resource (issue 36). Secrets (codes, tokens) are kept only as SHA-256;
-- nothing here is deleted that an auditor may ask for: revocation sets a
-- time.

-- The programs that ask for tokens: registered through dynamic client
-- registration (RFC 7591, id "ocl_…") or known by their Client ID Metadata
-- Document (the id is the document's https URL, fetched and cached here).
-- Only public clients: PKCE, no client secret.
CREATE TABLE oauth_clients (
    id            text        PRIMARY KEY,
    kind          text        NOT NULL CHECK (kind IN ('registered', 'document')),
    name          text        NOT NULL CHECK (name <> ''),
    redirect_uris text[]      NOT NULL CHECK (cardinality(redirect_uris) > 0),
    document      jsonb       NOT NULL,
    created_at    timestamptz NOT NULL,
    fetched_at    timestamptz,
    approved_at   timestamptz,
    approved_by   bigint      REFERENCES users (id),
    revoked_at    timestamptz,
    revoked_by    bigint      REFERENCES users (id)
);

-- A person's consent to one client: what the client's tokens act as (an
-- assistant, or that person's own assistant) and for which resource. The
-- tokens issued on it are its family: reusing a rotated refresh token, or
-- a code twice, revokes the whole grant.
CREATE TABLE oauth_grants (
    id           text        PRIMARY KEY,
    client_id    text        NOT NULL REFERENCES oauth_clients (id),
    user_id      bigint      NOT NULL REFERENCES users (id),
    assistant_id text        NOT NULL REFERENCES assistants (id),
    acts_as_user boolean     NOT NULL,
    resource     text        NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz,
    revoked_why  text
);
CREATE INDEX oauth_grants_client ON oauth_grants (client_id);

-- Authorization codes: single use (used_at set by the one UPDATE that
-- spends it), short-lived, bound to the client, redirect URI, PKCE
-- challenge (S256) and resource; grant_id is the grant its exchange made.
CREATE TABLE oauth_codes (
    hash         bytea       PRIMARY KEY,
    client_id    text        NOT NULL REFERENCES oauth_clients (id),
    user_id      bigint      NOT NULL REFERENCES users (id),
    assistant_id text        NOT NULL REFERENCES assistants (id),
    acts_as_user boolean     NOT NULL,
    redirect_uri text        NOT NULL,
    challenge    text        NOT NULL,
    resource     text        NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz,
    grant_id     text        REFERENCES oauth_grants (id)
);
CREATE INDEX oauth_codes_client ON oauth_codes (client_id);

-- Access and refresh tokens of a grant. A refresh token is spent by the
-- one UPDATE that sets rotated_at; presenting it again revokes the grant.
CREATE TABLE oauth_tokens (
    hash         bytea       PRIMARY KEY,
    grant_id     text        NOT NULL REFERENCES oauth_grants (id),
    kind         text        NOT NULL CHECK (kind IN ('access', 'refresh')),
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    rotated_at   timestamptz,
    revoked_at   timestamptz,
    last_used_at timestamptz
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);

-- The admin's setting: whether a client nobody approved may be used
-- (one row; none means unknown clients may be used after a person's
-- consent).
CREATE TABLE oauth_settings (
    id                    boolean     PRIMARY KEY DEFAULT true CHECK (id),
    clients_need_approval boolean     NOT NULL,
    changed_by            bigint      REFERENCES users (id),
    changed_at            timestamptz NOT NULL
);

-- +goose Down
DROP TABLE oauth_settings;
DROP TABLE oauth_tokens;
DROP TABLE oauth_codes;
DROP TABLE oauth_grants;
DROP TABLE oauth_clients;
