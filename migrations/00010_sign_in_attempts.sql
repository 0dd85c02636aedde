-- +goose Up
-- Sign-in throttling counts attempts in fixed windows and takes an attempt
-- before the password is checked, under the counter rows' locks, so that
-- parallel guesses queue on the row and at most the limit of them ever reach
-- the (expensive) argon2 check. A refused attempt is not counted.
--
-- Three counters per attempt:
--   account_source  one e-mail from one address (or IPv6 /64): the tight limit
--   source          one address, whatever the e-mail: stops spraying
--   account         one e-mail from anywhere: a much higher limit that slows
--                   distributed guessing; an address the account has signed
--                   in from recently is exempt, so guessers elsewhere cannot
--                   lock the real user out.
-- The unused part of the key is ''.
CREATE TABLE sign_in_attempts (
    scope           text        NOT NULL CHECK (scope IN ('account_source', 'source', 'account')),
    account         text        NOT NULL,
    source          text        NOT NULL,
    window_start    timestamptz NOT NULL,
    attempts        integer     NOT NULL CHECK (attempts >= 0),
    -- account_source only: the last successful sign-in (or password check)
    -- of this account from this address.
    last_success_at timestamptz,
    PRIMARY KEY (scope, account, source)
);
CREATE INDEX sign_in_attempts_window ON sign_in_attempts (window_start);

-- Replaced by sign_in_attempts; it only ever held the last window's failures.
DROP TABLE sign_in_failures;

-- +goose Down
CREATE TABLE sign_in_failures (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account text        NOT NULL,
    ip      text        NOT NULL,
    at      timestamptz NOT NULL
);
CREATE INDEX sign_in_failures_account ON sign_in_failures (account, at);
CREATE INDEX sign_in_failures_ip ON sign_in_failures (ip, at);
DROP TABLE sign_in_attempts;
