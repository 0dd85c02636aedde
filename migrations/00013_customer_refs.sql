-- +goose Up
-- Customer references are e-mail addresses compared without regard to case
-- (adapter.NormaliseCustomerRef): tasks and confirmation links made before
-- that rule get their reference trimmed and in lower case like new ones, so
-- that the customer's own pages and links find them.
UPDATE tasks SET customer_ref = lower(btrim(customer_ref, E' \t\n\r\f\v'))
 WHERE customer_ref <> lower(btrim(customer_ref, E' \t\n\r\f\v'));
UPDATE confirmation_links SET customer_ref = lower(btrim(customer_ref, E' \t\n\r\f\v'))
 WHERE customer_ref <> lower(btrim(customer_ref, E' \t\n\r\f\v'));

-- +goose Down
-- The original spelling is not kept: nothing to undo.
SELECT 1;
