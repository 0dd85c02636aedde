-- +goose Up
-- An operator's own assistant (issue 36): when a person consents to a
-- client acting as themselves, its tokens act as this assistant, bound to
-- that person. Events it records name the person as accountable, and the
-- person never approves what it proposed.
CREATE TABLE operator_assistants (
    user_id      bigint PRIMARY KEY REFERENCES users (id),
    assistant_id text   NOT NULL UNIQUE REFERENCES assistants (id)
);

-- +goose Down
DROP TABLE operator_assistants;
