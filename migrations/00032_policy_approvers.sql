-- +goose Up
-- Who may decide an action's cards (approve, reject, send back, edit, take
-- one): the console roles its policy lets. Agents always may, so every
-- sentence that says "an agent approves" stays true; a business adds
-- managers or admins per action. The second-approver rule and the permit
-- count only the approvals of people whose role is listed here now.
ALTER TABLE policies ADD COLUMN approver_roles text[] NOT NULL DEFAULT '{agent}'
    CONSTRAINT policies_approver_roles_known
    CHECK (approver_roles <@ '{agent,manager,admin}'::text[] AND 'agent' = ANY (approver_roles));

-- +goose Down
ALTER TABLE policies DROP COLUMN approver_roles;
