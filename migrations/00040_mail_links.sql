-- +goose Up
-- The mail's "Review and decide" link (issue 35): a single-use key mailed
-- to the contact the business system has on file, with the whole quote.
-- Spending it proves the browser that spends it is the customer, for one
-- request at one version with one quote (its digest, internal/consent):
-- whoever clicks in the customer's mailbox is the customer. Only the
-- token's SHA-256 is kept. A GET never spends it (mail scanners fetch
-- links); the page's POST does, once. It belongs to the confirmation link
-- whose page sent it, so the sweeper's deletion of dead links takes it too.
CREATE TABLE confirmation_mail_links (
    token_hash    bytea       PRIMARY KEY,
    link_selector text        NOT NULL REFERENCES confirmation_links (selector) ON DELETE CASCADE,
    invocation_id text        NOT NULL,
    version       integer     NOT NULL,
    quote_digest  bytea       NOT NULL,
    customer_ref  text        NOT NULL,
    sent_to       text        NOT NULL,
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    spent_at      timestamptz,
    retired_at    timestamptz
);
CREATE INDEX confirmation_mail_links_invocation ON confirmation_mail_links (invocation_id);
-- Link mails count with code mails against one customer's mail limits.
CREATE INDEX confirmation_mail_links_customer ON confirmation_mail_links (customer_ref, created_at);

-- +goose Down
DROP TABLE confirmation_mail_links;
