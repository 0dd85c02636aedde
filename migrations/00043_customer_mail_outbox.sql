-- +goose Up
-- The customer's mail goes out by itself (issue 35): when a request starts
-- waiting for its customer, a loop on every console instance mails the
-- whole quote with a "Review and decide" link, once per request version.
-- A row here is one instance's claim on one (request, version): taken by
-- one guarded INSERT … ON CONFLICT, so two instances racing send one mail;
-- next_at is when another may take it (the claim's lease, or a back-off
-- after a failure), sent_at when its mail went.
CREATE TABLE customer_mail_outbox (
    invocation_id text        NOT NULL REFERENCES invocations (id) ON DELETE CASCADE,
    version       integer     NOT NULL,
    attempts      integer     NOT NULL,
    next_at       timestamptz NOT NULL,
    sent_at       timestamptz,
    outcome       text        NOT NULL DEFAULT '',
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (invocation_id, version)
);
-- A mail link the loop sent (unprompted) does not stand for a mail someone
-- asked for: the loop's own record of a version is the row above.
ALTER TABLE confirmation_mail_links ADD COLUMN unprompted boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE confirmation_mail_links DROP COLUMN unprompted;
DROP TABLE customer_mail_outbox;
