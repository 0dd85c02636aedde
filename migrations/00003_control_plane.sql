-- +goose Up
-- Per action of a connected system: how far it may go without a person.
CREATE TABLE policies (
    system                text        NOT NULL,
    action                text        NOT NULL,
    -- 3 propose (an agent approves), 4 assisted (the customer confirms),
    -- 5 bounded autonomy (automatic within limits).
    stage                 smallint    NOT NULL CHECK (stage IN (3, 4, 5)),
    enabled               boolean     NOT NULL DEFAULT true,
    -- Stage 5 runs automatically only up to this amount; above it, approval.
    auto_max_cents        bigint      CHECK (auto_max_cents >= 0),
    -- Any stage: an amount above this needs an agent's approval.
    approval_above_cents  bigint      CHECK (approval_above_cents >= 0),
    -- Above this amount a second, different approver is required.
    second_approver_above_cents bigint CHECK (second_approver_above_cents >= 0),
    approval_window       interval    NOT NULL DEFAULT '24 hours',
    confirmation_window   interval    NOT NULL DEFAULT '30 minutes',
    owner_id              bigint      REFERENCES users (id),
    review_on             date,
    version               integer     NOT NULL DEFAULT 1,
    updated_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (system, action)
);

-- The single row of installation-wide controls: the global stop switch.
CREATE TABLE controls (
    id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
    stopped    boolean     NOT NULL DEFAULT false,
    changed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO controls DEFAULT VALUES;

CREATE TABLE tasks (
    id               text        PRIMARY KEY,
    assistant_id     text,
    customer_ref     text        NOT NULL,
    conversation_id  text        NOT NULL,
    systems          text[]      NOT NULL DEFAULT '{}',
    allowed_actions  text[]      NOT NULL,
    write_budget     integer     NOT NULL CHECK (write_budget >= 0),
    writes_used      integer     NOT NULL DEFAULT 0 CHECK (writes_used >= 0 AND writes_used <= write_budget),
    inflight_limit   integer     NOT NULL CHECK (inflight_limit > 0),
    rate_per_minute  integer     NOT NULL CHECK (rate_per_minute > 0),
    expires_at       timestamptz NOT NULL,
    state            text        NOT NULL CHECK (state IN ('active', 'paused', 'cancelled', 'closed')),
    version          integer     NOT NULL DEFAULT 1,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL
);
CREATE INDEX tasks_conversation ON tasks (conversation_id);
CREATE INDEX tasks_customer ON tasks (customer_ref);

-- The journal: one row per proposed write, written before anything is sent.
CREATE TABLE invocations (
    id                    text        PRIMARY KEY,
    task_id               text        NOT NULL REFERENCES tasks (id),
    conversation_id       text        NOT NULL,
    system                text        NOT NULL,
    action                text        NOT NULL,
    target_kind           text        NOT NULL,
    target_id             text        NOT NULL,
    target_display        text        NOT NULL,
    target_version        text        NOT NULL DEFAULT '',
    state                 text        NOT NULL CHECK (state IN ('proposed', 'awaiting_confirmation', 'awaiting_approval',
                              'approved', 'dispatching', 'completed', 'failed', 'unverified', 'not_dispatched',
                              'rejected', 'expired', 'reversed')),
    version               integer     NOT NULL DEFAULT 1,
    proposed_args         jsonb       NOT NULL,
    approved_args         jsonb,
    effective_args        jsonb,
    args_hash             bytea       NOT NULL,
    approved_args_hash    bytea,
    quote                 jsonb       NOT NULL,
    summary               text        NOT NULL DEFAULT '',
    summary_disagrees     boolean     NOT NULL DEFAULT false,
    idempotency_key       text        NOT NULL UNIQUE,
    client_key            text,
    amount_cents          bigint,
    policy_stage          smallint    NOT NULL,
    policy_version        integer     NOT NULL,
    route_reason          text        NOT NULL DEFAULT '',
    deadline_at           timestamptz,
    approved_at           timestamptz,
    permit_at             timestamptz,
    lease_until           timestamptz,
    finished_at           timestamptz,
    result                jsonb,
    error                 jsonb,
    verification          jsonb,
    not_dispatched_reason text,
    decision_reason       text,
    compensates_id        text        REFERENCES invocations (id),
    supersedes_id         text        REFERENCES invocations (id),
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL
);
CREATE INDEX invocations_task ON invocations (task_id, created_at);
CREATE INDEX invocations_dedup ON invocations (conversation_id, system, action, args_hash, created_at);
CREATE INDEX invocations_open ON invocations (state, deadline_at)
    WHERE state IN ('awaiting_confirmation', 'awaiting_approval', 'approved', 'dispatching', 'unverified');
CREATE INDEX invocations_compensates ON invocations (compensates_id) WHERE compensates_id IS NOT NULL;

-- A caller's Idempotency-Key (Stripe's rules): claimed before the work
-- starts, so a concurrent request with the same key is a conflict, and
-- bound to the request it came with, so another request with it is an error.
CREATE TABLE client_keys (
    task_id       text        NOT NULL REFERENCES tasks (id),
    key           text        NOT NULL,
    request_hash  bytea       NOT NULL,
    invocation_id text        REFERENCES invocations (id),
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (task_id, key)
);

-- After a policy refusal on a target, further proposals on it in the same
-- task are refused until an agent lifts the block: another reason code or
-- amount for the same target is a guess, not a new request.
CREATE TABLE target_blocks (
    task_id    text        NOT NULL REFERENCES tasks (id),
    system     text        NOT NULL,
    target_id  text        NOT NULL,
    action     text        NOT NULL,
    error      jsonb       NOT NULL,
    created_at timestamptz NOT NULL,
    lifted_at  timestamptz,
    lifted_by  bigint      REFERENCES users (id),
    PRIMARY KEY (task_id, system, target_id)
);

-- Append-only audit. Every state change writes its event in the same
-- transaction; nobody, the application included, may change or remove one.
CREATE TABLE events (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at            timestamptz NOT NULL,
    actor_kind    text        NOT NULL CHECK (actor_kind IN ('customer', 'user', 'assistant', 'policy', 'system')),
    actor_id      text        NOT NULL,
    action        text        NOT NULL,
    task_id       text,
    invocation_id text,
    data          jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX events_task ON events (task_id, id);
CREATE INDEX events_invocation ON events (invocation_id, id);
CREATE INDEX events_action_at ON events (action, at);

-- +goose StatementBegin
CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only: % is not allowed', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER events_no_update BEFORE UPDATE OR DELETE ON events FOR EACH ROW EXECUTE FUNCTION events_append_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();
REVOKE UPDATE, DELETE, TRUNCATE ON events FROM PUBLIC;

-- +goose Down
DROP TABLE events;
DROP FUNCTION events_append_only();
DROP TABLE target_blocks;
DROP TABLE client_keys;
DROP TABLE invocations;
DROP TABLE tasks;
DROP TABLE controls;
DROP TABLE policies;
