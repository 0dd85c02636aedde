-- +goose Up
-- A confirmation link shows a request; it no longer proves who opens it.
-- Confirming needs the customer's proof (a one-time code sent to the
-- contact on file, a signed-in customer account, or an assertion signed by
-- the business's own site), so opening a link spends nothing: mail
-- scanners and link previews may fetch it. An invocation has at most one
-- live link; a link is revoked only on purpose (rotation), and expired or
-- revoked links are deleted by the sweeper.
ALTER TABLE confirmation_links ADD COLUMN revoked_at timestamptz;
UPDATE confirmation_links SET revoked_at = used_at WHERE used_at IS NOT NULL;
UPDATE confirmation_links l SET revoked_at = l.created_at
 WHERE l.revoked_at IS NULL
   AND EXISTS (SELECT 1 FROM confirmation_links n
                WHERE n.invocation_id = l.invocation_id AND n.revoked_at IS NULL
                  AND (n.created_at, n.selector) > (l.created_at, l.selector));
ALTER TABLE confirmation_links DROP COLUMN used_at;
CREATE UNIQUE INDEX confirmation_links_live ON confirmation_links (invocation_id) WHERE revoked_at IS NULL;

-- A one-time code sent out of band for one link. Only a salted SHA-256 of
-- the code is kept; a code allows a few wrong tries and then dies.
CREATE TABLE confirmation_codes (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    link_selector text        NOT NULL REFERENCES confirmation_links (selector) ON DELETE CASCADE,
    customer_ref  text        NOT NULL,
    sent_to       text        NOT NULL,
    salt          bytea       NOT NULL,
    code_hash     bytea       NOT NULL,
    attempts      smallint    NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz
);
CREATE INDEX confirmation_codes_link ON confirmation_codes (link_selector, created_at DESC);

-- Nonces of customer assertions already accepted: an assertion proves once.
CREATE TABLE customer_assertions (
    system       text        NOT NULL,
    nonce        text        NOT NULL,
    customer_ref text        NOT NULL,
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz NOT NULL,
    PRIMARY KEY (system, nonce)
);

-- +goose Down
DROP TABLE customer_assertions;
DROP TABLE confirmation_codes;
DROP INDEX confirmation_links_live;
ALTER TABLE confirmation_links ADD COLUMN used_at timestamptz;
ALTER TABLE confirmation_links DROP COLUMN revoked_at;
