-- +goose Up
-- A task's limits stay within maxima an admin sets per assistant, and a
-- task's customer is vouched for by the business (a signed assertion when
-- the task opens) unless an admin has let the assistant act for any
-- customer (a staff-facing assistant). Existing assistants get the
-- defaults and no such right: their tasks need the business's assertion.
ALTER TABLE assistants
    ADD COLUMN max_write_budget    integer NOT NULL DEFAULT 20 CHECK (max_write_budget BETWEEN 0 AND 1000),
    ADD COLUMN max_inflight_limit  integer NOT NULL DEFAULT 5 CHECK (max_inflight_limit BETWEEN 1 AND 100),
    ADD COLUMN max_rate_per_minute integer NOT NULL DEFAULT 30 CHECK (max_rate_per_minute BETWEEN 1 AND 10000),
    ADD COLUMN any_customer        boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE assistants
    DROP COLUMN any_customer,
    DROP COLUMN max_rate_per_minute,
    DROP COLUMN max_inflight_limit,
    DROP COLUMN max_write_budget;
