-- +goose Up
-- Code guessing is bounded per customer and across customers, not per link:
-- links are free to make, so a bound per link bounds nothing. Each wrong
-- code is one row here, written in the same locked transaction that
-- compared it, before the answer leaves; a right code writes none. The
-- rows carry no link, so they outlive the links the sweeper deletes. A
-- wrong code also counts against the assistant whose task made the link
-- (it holds the link, so it is who could be guessing): one assistant then
-- uses up its own customers' tries, never everyone's.
CREATE TABLE confirmation_code_misses (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_ref text        NOT NULL,
    assistant_id text,
    at           timestamptz NOT NULL
);
CREATE INDEX confirmation_code_misses_customer ON confirmation_code_misses (customer_ref, at);
CREATE INDEX confirmation_code_misses_assistant ON confirmation_code_misses (assistant_id, at) WHERE assistant_id IS NOT NULL;
CREATE INDEX confirmation_code_misses_at ON confirmation_code_misses (at);

-- Code mails are counted per customer across their links.
CREATE INDEX confirmation_codes_customer ON confirmation_codes (customer_ref, created_at);

-- +goose Down
DROP INDEX confirmation_codes_customer;
DROP TABLE confirmation_code_misses;
