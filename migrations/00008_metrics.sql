-- +goose Up
-- Daily roll-ups behind the manager's metrics pages. They are derived data:
-- the raw rows (invocations, events, conversation_events) stay the record,
-- and the roll-ups are refreshed incrementally by background work that
-- recomputes only the days touched by events newer than a watermark (see
-- store/metrics_rollup.go). Reading a page sums one row per day and
-- dimension, so its cost follows the date range, never the history.

-- Where each incremental refresh stopped: the last id of events and of
-- conversation_events already folded in.
CREATE TABLE metrics_watermarks (
    name    text   PRIMARY KEY,
    last_id bigint NOT NULL DEFAULT 0
);
INSERT INTO metrics_watermarks (name) VALUES ('events'), ('conversation_events');

-- Invocations by the day they were proposed (UTC), per action, assistant and
-- the stage their policy had when they were proposed. The counters follow
-- each invocation's current state, so a day is recomputed whenever one of
-- its invocations changes.
CREATE TABLE metrics_invocation_daily (
    day             date     NOT NULL,
    system          text     NOT NULL,
    action          text     NOT NULL,
    assistant_id    text     NOT NULL,
    stage           smallint NOT NULL,
    proposed        bigint   NOT NULL,
    settled         bigint   NOT NULL,
    completed       bigint   NOT NULL,
    reversed_7d     bigint   NOT NULL,
    person_approved bigint   NOT NULL,
    unedited        bigint   NOT NULL,
    disagreed       bigint   NOT NULL,
    -- Approval waits (decided by a person) in the buckets of metrics.Buckets.
    wait_hist       bigint[] NOT NULL,
    PRIMARY KEY (day, system, action, assistant_id, stage)
);

-- Why invocations were not dispatched or were rejected, per proposal day.
CREATE TABLE metrics_reason_daily (
    day          date   NOT NULL,
    system       text   NOT NULL,
    action       text   NOT NULL,
    assistant_id text   NOT NULL,
    kind         text   NOT NULL CHECK (kind IN ('not_dispatched', 'rejected')),
    reason       text   NOT NULL,
    n            bigint NOT NULL,
    PRIMARY KEY (day, system, action, assistant_id, kind, reason)
);

-- Dry-run refusals and the proposals that came after a policy refusal on the
-- same target (a second try after a refusal), per day of the event.
CREATE TABLE metrics_refusal_daily (
    day           date   NOT NULL,
    system        text   NOT NULL,
    action        text   NOT NULL,
    assistant_id  text   NOT NULL,
    refused       bigint NOT NULL,
    blocked_after bigint NOT NULL,
    PRIMARY KEY (day, system, action, assistant_id)
);

-- One row per conversation, folded from its conversation_events.
CREATE TABLE metrics_conversations (
    conversation_id text        PRIMARY KEY,
    assistant_id    text        NOT NULL,
    intent          text        NOT NULL,
    started_at      timestamptz NOT NULL,
    ended_at        timestamptz NOT NULL,
    handed_off      boolean     NOT NULL,
    clarified       boolean     NOT NULL,
    contained       boolean     NOT NULL,
    resolved        boolean     NOT NULL
);
CREATE INDEX metrics_conversations_started ON metrics_conversations (started_at);

-- Conversations by the day they started, per first intent and assistant.
CREATE TABLE metrics_conversation_daily (
    day             date     NOT NULL,
    intent          text     NOT NULL,
    assistant_id    text     NOT NULL,
    conversations   bigint   NOT NULL,
    contained       bigint   NOT NULL,
    clarified       bigint   NOT NULL,
    handed_off      bigint   NOT NULL,
    resolved        bigint   NOT NULL,
    -- Times to resolution in the buckets of metrics.Buckets.
    resolution_hist bigint[] NOT NULL,
    PRIMARY KEY (day, intent, assistant_id)
);

CREATE INDEX invocations_created ON invocations (created_at);
CREATE INDEX events_refusals ON events (at) WHERE action IN ('proposal.refused', 'proposal.blocked_after_refusal');

-- +goose Down
DROP INDEX events_refusals;
DROP INDEX invocations_created;
DROP TABLE metrics_conversation_daily;
DROP TABLE metrics_conversations;
DROP TABLE metrics_refusal_daily;
DROP TABLE metrics_reason_daily;
DROP TABLE metrics_invocation_daily;
DROP TABLE metrics_watermarks;
