-- +goose Up
-- The metrics page's filter lists every system, action and intent ever
-- rolled up.
-- SELECT DISTINCT over the daily roll-up read all of it, a cost that grew
-- with the history kept (make bench: the page at 1,100,000 invocations took
-- 1.6 × its time at 10,000). These indexes let the lists skip from one value
-- to the next (store.MetricsDimensions), touching one entry per value.
CREATE INDEX metrics_invocation_daily_system ON metrics_invocation_daily (system);
CREATE INDEX metrics_invocation_daily_action ON metrics_invocation_daily (action);
CREATE INDEX metrics_conversation_daily_intent ON metrics_conversation_daily (intent);

-- +goose Down
DROP INDEX metrics_conversation_daily_intent;
DROP INDEX metrics_invocation_daily_action;
DROP INDEX metrics_invocation_daily_system;
