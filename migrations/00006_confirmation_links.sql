-- +goose Up
-- A customer's confirmation link: a single-purpose token bound to one
-- invocation and one customer. The token is "<selector>.<verifier>"; the
-- selector finds the row, only the verifier's SHA-256 is kept, so a copy of
-- this table opens nothing. A link is used once (it starts a customer
-- session) and expires with the invocation's deadline.
CREATE TABLE confirmation_links (
    selector      text        PRIMARY KEY,
    verifier_hash bytea       NOT NULL,
    invocation_id text        NOT NULL REFERENCES invocations (id),
    customer_ref  text        NOT NULL,
    expires_at    timestamptz NOT NULL,
    created_at    timestamptz NOT NULL,
    used_at       timestamptz
);
CREATE INDEX confirmation_links_invocation ON confirmation_links (invocation_id);

-- +goose Down
DROP TABLE confirmation_links;
