-- The demo shop's own storage. Every statement is idempotent: Migrate runs
-- this file on every start, under an advisory lock.

CREATE SCHEMA IF NOT EXISTS shop;

-- seed_runs remembers that Seed already ran, so seeding twice adds nothing.
CREATE TABLE IF NOT EXISTS shop.seed_runs (
    name      text PRIMARY KEY,
    seeded_at timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS shop.customers (
    id                    text PRIMARY KEY,
    name                  text NOT NULL,
    email                 text NOT NULL UNIQUE,
    risk_score            integer NOT NULL DEFAULT 0 CHECK (risk_score BETWEEN 0 AND 100),
    fraud_flag            boolean NOT NULL DEFAULT false,
    internal_notes        text NOT NULL DEFAULT '',
    processor_customer_id text NOT NULL,
    version               integer NOT NULL DEFAULT 1,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL
);
-- The customer's language (a BCP 47 tag, "" for none), which the shop
-- tells Countersign so the customer's pages and mails speak it. Added
-- apart so a shop created before it gains the column.
ALTER TABLE shop.customers ADD COLUMN IF NOT EXISTS locale text NOT NULL DEFAULT '';

-- A site is one account of a customer (a shop, a blog) that a subscription pays for.
CREATE TABLE IF NOT EXISTS shop.sites (
    id          text PRIMARY KEY,
    customer_id text NOT NULL REFERENCES shop.customers (id),
    domain      text NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS sites_customer_idx ON shop.sites (customer_id);

CREATE TABLE IF NOT EXISTS shop.subscriptions (
    id                        text PRIMARY KEY,
    customer_id               text NOT NULL REFERENCES shop.customers (id),
    site_id                   text NOT NULL REFERENCES shop.sites (id),
    plan                      text NOT NULL,
    price_cents               bigint NOT NULL CHECK (price_cents >= 0),
    currency                  text NOT NULL,
    billing_interval          text NOT NULL CHECK (billing_interval IN ('month', 'year')),
    status                    text NOT NULL CHECK (status IN ('active', 'cancelled')),
    current_period_start      timestamptz NOT NULL,
    current_period_end        timestamptz NOT NULL,
    cancel_at_period_end      boolean NOT NULL DEFAULT false,
    cancelled_at              timestamptz,
    cancel_reason             text,
    ended_at                  timestamptz,
    -- Usage owed now; an immediate cancellation must settle it with the card.
    balance_cents             bigint NOT NULL DEFAULT 0 CHECK (balance_cents >= 0),
    payment_method_brand      text NOT NULL,
    payment_method_last4      text NOT NULL,
    payment_method_status     text NOT NULL CHECK (payment_method_status IN ('valid', 'declined')),
    decline_code              text NOT NULL DEFAULT '',
    margin_cents              bigint NOT NULL DEFAULT 0,
    processor_subscription_id text NOT NULL,
    internal_notes            text NOT NULL DEFAULT '',
    version                   integer NOT NULL DEFAULT 1,
    created_at                timestamptz NOT NULL,
    updated_at                timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS subscriptions_customer_idx ON shop.subscriptions (customer_id);

CREATE TABLE IF NOT EXISTS shop.invoices (
    id                   text PRIMARY KEY,
    number               text NOT NULL UNIQUE,
    subscription_id      text NOT NULL REFERENCES shop.subscriptions (id),
    customer_id          text NOT NULL REFERENCES shop.customers (id),
    status               text NOT NULL CHECK (status IN ('upcoming', 'paid', 'void')),
    amount_cents         bigint NOT NULL CHECK (amount_cents >= 0),
    currency             text NOT NULL,
    period_start         timestamptz NOT NULL,
    period_end           timestamptz NOT NULL,
    paid_at              timestamptz,
    voided_at            timestamptz,
    receipts_sent        integer NOT NULL DEFAULT 0,
    last_receipt_sent_at timestamptz,
    processor_invoice_id text NOT NULL,
    internal_notes       text NOT NULL DEFAULT '',
    version              integer NOT NULL DEFAULT 1,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS invoices_subscription_idx ON shop.invoices (subscription_id);

CREATE TABLE IF NOT EXISTS shop.receipts (
    id         text PRIMARY KEY,
    invoice_id text NOT NULL REFERENCES shop.invoices (id),
    sent_to    text NOT NULL,
    sent_at    timestamptz NOT NULL,
    request_id text NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS receipts_invoice_idx ON shop.receipts (invoice_id);

CREATE TABLE IF NOT EXISTS shop.products (
    id             text PRIMARY KEY,
    sku            text NOT NULL UNIQUE,
    name           text NOT NULL,
    description    text NOT NULL DEFAULT '',
    price_cents    bigint NOT NULL CHECK (price_cents >= 0),
    currency       text NOT NULL,
    cost_cents     bigint NOT NULL DEFAULT 0 CHECK (cost_cents >= 0),
    stock          integer NOT NULL CHECK (stock >= 0),
    reserved       integer NOT NULL DEFAULT 0 CHECK (reserved >= 0),
    warehouse      text NOT NULL DEFAULT '',
    restock_at     timestamptz,
    supplier_notes text NOT NULL DEFAULT '',
    version        integer NOT NULL DEFAULT 1,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS shop.orders (
    id                text PRIMARY KEY CHECK (id ~ '^ord_[0-9a-f]{16}$'),
    customer_id       text NOT NULL REFERENCES shop.customers (id),
    currency          text NOT NULL,
    shipping_cents    bigint NOT NULL CHECK (shipping_cents >= 0),
    fulfilment_status text NOT NULL
        CHECK (fulfilment_status IN ('pending', 'fulfilled', 'shipped', 'delivered', 'not_received')),
    placed_at         timestamptz NOT NULL,
    shipped_at        timestamptz,
    delivered_at      timestamptz,
    carrier           text NOT NULL DEFAULT '',
    tracking_number   text NOT NULL DEFAULT '',
    damaged           boolean NOT NULL DEFAULT false,
    case_notes        text NOT NULL DEFAULT '',
    ship_name         text NOT NULL,
    ship_line1        text NOT NULL,
    ship_line2        text NOT NULL DEFAULT '',
    ship_city         text NOT NULL,
    ship_postal_code  text NOT NULL,
    ship_country      text NOT NULL,
    risk_score        integer NOT NULL DEFAULT 0 CHECK (risk_score BETWEEN 0 AND 100),
    fraud_flag        boolean NOT NULL DEFAULT false,
    margin_cents      bigint NOT NULL DEFAULT 0,
    internal_notes    text NOT NULL DEFAULT '',
    version           integer NOT NULL DEFAULT 1,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS orders_customer_idx ON shop.orders (customer_id);

CREATE TABLE IF NOT EXISTS shop.order_items (
    id               text PRIMARY KEY,
    order_id         text NOT NULL REFERENCES shop.orders (id),
    position         integer NOT NULL,
    product_id       text REFERENCES shop.products (id),
    name             text NOT NULL,
    quantity         integer NOT NULL CHECK (quantity > 0),
    unit_price_cents bigint NOT NULL CHECK (unit_price_cents >= 0),
    UNIQUE (order_id, position)
);

-- Refunds are never updated: each POST /refunds adds one.
CREATE TABLE IF NOT EXISTS shop.refunds (
    id                  text PRIMARY KEY,
    order_id            text NOT NULL REFERENCES shop.orders (id),
    amount_cents        bigint NOT NULL CHECK (amount_cents > 0),
    currency            text NOT NULL,
    reason              text NOT NULL DEFAULT '',
    status              text NOT NULL CHECK (status IN ('succeeded')),
    request_id          text NOT NULL DEFAULT '',
    processor_refund_id text NOT NULL,
    created_at          timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS refunds_order_idx ON shop.refunds (order_id);

-- The ledger holds one row per effect applied, written in the effect's own
-- transaction. Nothing updates or deletes it.
CREATE TABLE IF NOT EXISTS shop.ledger (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         timestamptz NOT NULL,
    kind       text NOT NULL,
    object     text NOT NULL,
    request_id text NOT NULL,
    data       jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_request_idx ON shop.ledger (request_id);
CREATE INDEX IF NOT EXISTS ledger_object_idx ON shop.ledger (object);
