-- +goose Up
-- Route reasons are sentences a person reads as they are — on the queue's
-- cards, in Slack, in the API — with no stage numbers; the control plane
-- writes them so (controlplane.RouteExposure). The reasons stored before
-- become the same sentences. (reason.go tells a customer's request by its
-- reason, so the two must agree.)
UPDATE invocations SET route_reason = CASE route_reason
    WHEN 'stage 3: an agent approves' THEN 'Its policy has an agent approve every request of this kind.'
    WHEN 'stage 4: the customer confirms' THEN 'Its policy has the customer confirm every request of this kind.'
    WHEN 'stage 5: within the policy''s limits' THEN 'Within the policy''s limits.'
    WHEN 'stage 5 needs a policy owner, and this policy has none' THEN 'Automatic approval needs a policy owner, and this policy has none.'
    WHEN 'stage 5 pays out automatically only up to a ceiling, and this policy has none' THEN 'Automatic approval pays out only up to a ceiling, and this policy has none.'
    ELSE upper(left(route_reason, 1)) || substr(route_reason, 2) || '.'
    END
WHERE route_reason <> '' AND route_reason NOT LIKE '%.';

-- +goose Down
UPDATE invocations SET route_reason = CASE route_reason
    WHEN 'Its policy has an agent approve every request of this kind.' THEN 'stage 3: an agent approves'
    WHEN 'Its policy has the customer confirm every request of this kind.' THEN 'stage 4: the customer confirms'
    WHEN 'Within the policy''s limits.' THEN 'stage 5: within the policy''s limits'
    WHEN 'Automatic approval needs a policy owner, and this policy has none.' THEN 'stage 5 needs a policy owner, and this policy has none'
    WHEN 'Automatic approval pays out only up to a ceiling, and this policy has none.' THEN 'stage 5 pays out automatically only up to a ceiling, and this policy has none'
    ELSE lower(left(route_reason, 1)) || substr(route_reason, 2, length(route_reason) - 2)
    END
WHERE route_reason LIKE '%.';
