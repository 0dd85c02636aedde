-- +goose Up
-- A customer's mail is written in the customer's language (issue 37). The
-- console's own mail of a request version keeps the language its first
-- written attempt chose, so a mail queued in French goes out in French even
-- when it is sent later, after the customer record changed. Only the mail
-- sender reads it: no console page or API answer says which language a mail
-- was written in.
ALTER TABLE customer_mail_outbox ADD COLUMN locale text NOT NULL DEFAULT '';
-- The language a customer last decided in is read from their newest
-- decision's event (store.LastCustomerLocale) for each mail the console
-- writes on its own: this keeps that read off a scan of the audit trail.
CREATE INDEX events_customer_locale ON events (actor_id, id) WHERE actor_kind = 'customer' AND data ? 'locale';

-- +goose Down
DROP INDEX events_customer_locale;
ALTER TABLE customer_mail_outbox DROP COLUMN locale;
