-- +goose Up
-- Step-up for decisions (issue 34): a WebAuthn ceremony may be a step-up,
-- an assertion whose challenge is derived from the approval it is made
-- for (internal/stepup), kept like the sign-in's until the answer.
ALTER TABLE webauthn_ceremonies DROP CONSTRAINT webauthn_ceremonies_purpose_check;
ALTER TABLE webauthn_ceremonies ADD CONSTRAINT webauthn_ceremonies_purpose_check
    CHECK (purpose IN ('register', 'sign_in', 'step_up'));

-- +goose Down
DELETE FROM webauthn_ceremonies WHERE purpose = 'step_up';
ALTER TABLE webauthn_ceremonies DROP CONSTRAINT webauthn_ceremonies_purpose_check;
ALTER TABLE webauthn_ceremonies ADD CONSTRAINT webauthn_ceremonies_purpose_check
    CHECK (purpose IN ('register', 'sign_in'));
