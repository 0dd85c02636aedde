-- +goose Up
-- Slack: the approval queue's cards decided in a channel.
--
-- A Slack user decides only as the console account linked to them. A link
-- is made by the person (a one-time code the bot sends them in Slack,
-- entered on their console page) or, when the admin turns it on, by the
-- verified e-mail address Slack holds matching the account's.
CREATE TABLE slack_links (
    slack_team text        NOT NULL,
    slack_user text        NOT NULL,
    user_id    bigint      NOT NULL REFERENCES users (id),
    how        text        NOT NULL CHECK (how IN ('code', 'email')),
    linked_at  timestamptz NOT NULL,
    PRIMARY KEY (slack_team, slack_user)
);
CREATE INDEX slack_links_user ON slack_links (user_id);

-- Linking by e-mail address is off until an admin turns it on.
CREATE TABLE slack_settings (
    id          boolean     PRIMARY KEY DEFAULT true CHECK (id),
    email_match boolean     NOT NULL DEFAULT false,
    changed_by  bigint      REFERENCES users (id),
    changed_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO slack_settings DEFAULT VALUES;

-- Codes are kept as hashes; a code is used once, before it expires.
CREATE TABLE slack_link_codes (
    code_hash  bytea       PRIMARY KEY,
    slack_team text        NOT NULL,
    slack_user text        NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    used_by    bigint      REFERENCES users (id)
);
CREATE INDEX slack_link_codes_slack_user ON slack_link_codes (slack_team, slack_user, created_at);

-- Each wrong code entered is a row, so guessing is bounded per account.
CREATE TABLE slack_link_misses (
    id      bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id bigint      NOT NULL REFERENCES users (id),
    at      timestamptz NOT NULL
);
CREATE INDEX slack_link_misses_user ON slack_link_misses (user_id, at);

-- Every signed request from Slack taken, by its signature, for as long as
-- its timestamp is inside the window: the same request again is refused.
CREATE TABLE slack_requests_seen (
    signature bytea       PRIMARY KEY,
    sent_at   timestamptz NOT NULL
);
CREATE INDEX slack_requests_seen_sent ON slack_requests_seen (sent_at);

-- The channel's message of each card. shown says what it shows (the
-- invocation's state and version and the card's holder): when that moves,
-- the message is updated. ts is null while the first post is under way.
-- open is false once the message shows an end the card will not leave.
CREATE TABLE slack_messages (
    invocation_id text        PRIMARY KEY REFERENCES invocations (id),
    channel       text        NOT NULL,
    ts            text,
    shown         text        NOT NULL DEFAULT '',
    open          boolean     NOT NULL DEFAULT true,
    posted_at     timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE INDEX slack_messages_open ON slack_messages (invocation_id) WHERE open;

-- +goose Down
DROP TABLE slack_messages;
DROP TABLE slack_requests_seen;
DROP TABLE slack_link_misses;
DROP TABLE slack_link_codes;
DROP TABLE slack_settings;
DROP TABLE slack_links;
