-- +goose Up
-- A dispatch lease belongs to the worker it was granted to. The permit
-- writes a random token beside lease_until; just before the request leaves,
-- the worker restarts the lease in one guarded UPDATE that matches its token
-- and a lease that has not run out, and sends nothing when no row matches
-- (the sweeper has made the invocation unverified, or will). Only the
-- token's holder records the outcome. NULL on rows that never got a permit
-- and on rows permitted before this migration.
ALTER TABLE invocations ADD COLUMN lease_token text;

-- +goose Down
ALTER TABLE invocations DROP COLUMN lease_token;
