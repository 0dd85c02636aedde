-- +goose Up
-- One business object is one target (issue 38). An object kind may declare
-- the business key that makes it the same object as another system's (the
-- shop's order number, a payment's metadata.order_number); the adapter
-- reads it and the quote's target carries it (quote.target.business_key).
-- Exposure and duplicates count per key across systems, and, for money,
-- per customer across every system whose objects carry a key of that name:
-- these indexes serve those sums as the per-system ones of 00019 do.
CREATE INDEX invocations_exposure_object ON invocations
    ((quote #>> '{target,business_key,name}'), (quote #>> '{target,business_key,value}'), created_at)
    WHERE amount_cents IS NOT NULL AND quote #>> '{target,business_key,name}' IS NOT NULL;
CREATE INDEX invocations_exposure_object_customer ON invocations
    ((quote #>> '{target,business_key,name}'), customer_ref, created_at)
    WHERE amount_cents IS NOT NULL AND quote #>> '{target,business_key,name}' IS NOT NULL;

-- A policy refusal blocks the business object for the customer in every
-- system that reaches it: the block keeps the key it was made on.
ALTER TABLE target_blocks ADD COLUMN business_key_name text, ADD COLUMN business_key_value text;
CREATE INDEX target_blocks_object ON target_blocks (customer_ref, business_key_name, business_key_value)
    WHERE lifted_at IS NULL AND business_key_name IS NOT NULL;

-- +goose Down
DROP INDEX target_blocks_object;
ALTER TABLE target_blocks DROP COLUMN business_key_value, DROP COLUMN business_key_name;
DROP INDEX invocations_exposure_object_customer;
DROP INDEX invocations_exposure_object;
