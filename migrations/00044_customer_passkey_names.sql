-- +goose Up
-- A customer's passkeys are listed on their page for a shop and can be
-- removed there (issue 35). name is what the list calls each one, from the
-- browser that added it ("Safari on iPhone"), so a customer tells two
-- apart; passkeys added before it read as "Passkey".
ALTER TABLE customer_passkeys ADD COLUMN name text NOT NULL DEFAULT 'Passkey'
    CHECK (char_length(name) BETWEEN 1 AND 60);

-- +goose Down
ALTER TABLE customer_passkeys DROP COLUMN name;
