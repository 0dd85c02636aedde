-- +goose Up
-- Unknown outcomes settle themselves where the system can tell (issue 38):
-- after a write ends unverified, every console instance's reconciler looks
-- it up again through its adapter, with a back-off, a bounded number of
-- times. A row here is the sweep of one unverified invocation: claimed by
-- one guarded INSERT … ON CONFLICT, so two instances never look the same
-- request up at once; next_at is when another look may start (the claim's
-- lease while one looks, so a crashed instance's claim runs out, then the
-- back-off); ended_at is when the sweep stopped, settled or handed to a
-- person (outcome says which).
CREATE TABLE reconcile_sweeps (
    invocation_id text        PRIMARY KEY REFERENCES invocations (id) ON DELETE CASCADE,
    attempts      integer     NOT NULL,
    first_at      timestamptz NOT NULL,
    next_at       timestamptz NOT NULL,
    outcome       text        NOT NULL DEFAULT '',
    ended_at      timestamptz,
    updated_at    timestamptz NOT NULL
);

-- +goose Down
DROP TABLE reconcile_sweeps;
