-- +goose Up
-- The transaction that began each call in the adapters' request ledger (the
-- row's own xmin names the one that recorded its outcome). With the events'
-- xmin, this counts from the journal how many commits one write makes before
-- its request leaves and after (make bench: commits_per_write). Set by
-- default, so no statement changes; rows from before stay NULL.
ALTER TABLE adapter_requests ADD COLUMN begun_xid xid8;
ALTER TABLE adapter_requests ALTER COLUMN begun_xid SET DEFAULT pg_current_xact_id();

-- +goose Down
ALTER TABLE adapter_requests DROP COLUMN begun_xid;
