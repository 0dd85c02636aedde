-- +goose Up
-- A policy states the currency of its amount limits (issue 38): its
-- automatic ceiling, approval threshold, second-approver amount and
-- step-up amount are in minor units of this ISO 4217 code. The limits
-- written before it were in US dollars. A request in another currency,
-- or on a customer or object with money in another currency within the
-- exposure window, is never compared with them: it goes to a person.
ALTER TABLE policies ADD COLUMN limit_currency text NOT NULL DEFAULT 'USD'
    CHECK (limit_currency ~ '^[A-Z]{3}$');

-- +goose Down
ALTER TABLE policies DROP COLUMN limit_currency;
