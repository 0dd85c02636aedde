-- +goose Up
-- A queue card's quote goes stale when another write on the same object
-- moves after it was made (a second refund on the same order completes).
-- The queue looks those up per card by object; without this index that is
-- a scan of every invocation ever stored. (The queue's own order, soonest
-- deadline first, reads invocations_approval_queue backwards: no new index.)
CREATE INDEX invocations_target ON invocations (system, target_id);

-- +goose Down
DROP INDEX invocations_target;
