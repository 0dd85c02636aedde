package authserver

import (
	"context"
	"errors"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// Clients lists every client, newest first.
func (s *Service) Clients(ctx context.Context) ([]Client, error) {
	rows, err := s.store.OAuthClients(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Client, len(rows))
	for i, r := range rows {
		out[i] = clientFromRow(r)
	}
	return out, nil
}

// KeptClient returns the client of id as the console keeps it, fetching
// nothing: what an admin acts on, even when the client's metadata
// document can no longer be fetched. Not found when there is no such
// client.
func (s *Service) KeptClient(ctx context.Context, id string) (Client, error) {
	row, err := s.store.OAuthClient(ctx, id)
	if err != nil {
		return Client{}, err
	}
	return clientFromRow(row), nil
}

// Grants lists every grant (a person's consent and the tokens issued on
// it), newest first.
func (s *Service) Grants(ctx context.Context) ([]store.OAuthGrantRow, error) {
	return s.store.OAuthGrants(ctx)
}

// ApproveClient records an admin's approval of a client for first use
// (oauth.client_approved). Not found when there is no such client;
// Conflict when it is approved already or revoked.
func (s *Service) ApproveClient(ctx context.Context, by controlplane.Actor, id string) error {
	row, err := s.store.OAuthClient(ctx, id)
	if err != nil {
		return err
	}
	now := s.now()
	e, err := controlplane.AuditEvent(now, by, controlplane.EventOAuthClientApproved, "", "",
		map[string]any{"client_id": id, "client": row.Name})
	if err != nil {
		return err
	}
	return conflictSays(s.store.ApproveOAuthClient(ctx, id, by.UserID, now, e), "This client is approved already, or revoked.")
}

// RevokeClient revokes a client and every grant it holds
// (oauth.client_revoked): its tokens stop working at once and it cannot
// be connected again. Not found when there is no such client; Conflict
// when it is revoked already.
func (s *Service) RevokeClient(ctx context.Context, by controlplane.Actor, id string) error {
	row, err := s.store.OAuthClient(ctx, id)
	if err != nil {
		return err
	}
	now := s.now()
	e, err := controlplane.AuditEvent(now, by, controlplane.EventOAuthClientRevoked, "", "",
		map[string]any{"client_id": id, "client": row.Name})
	if err != nil {
		return err
	}
	return conflictSays(s.store.RevokeOAuthClient(ctx, id, by.UserID, now, e), "This client is revoked already.")
}

// RevokeGrant revokes every token of a grant (oauth.token_revoked, by
// "admin"); not found when there is no live grant of that id.
func (s *Service) RevokeGrant(ctx context.Context, by controlplane.Actor, id string) error {
	g, err := s.store.OAuthGrant(ctx, id)
	if err != nil {
		return err
	}
	now := s.now()
	e, err := controlplane.AuditEvent(now, by, controlplane.EventOAuthRevoked, "", "",
		map[string]any{"grant_id": id, "client_id": g.ClientID, "by": "admin"})
	if err != nil {
		return err
	}
	return s.store.RevokeOAuthGrant(ctx, id, "revoked_by_admin", now, e)
}

// ClientsNeedApproval reports whether a client no admin approved is
// refused.
func (s *Service) ClientsNeedApproval(ctx context.Context) (bool, error) {
	return s.store.OAuthClientsNeedApproval(ctx)
}

// SetClientsNeedApproval changes that setting (oauth.setting_changed).
func (s *Service) SetClientsNeedApproval(ctx context.Context, by controlplane.Actor, need bool) error {
	now := s.now()
	e, err := controlplane.AuditEvent(now, by, controlplane.EventOAuthSettingChanged, "", "",
		map[string]any{"clients_need_approval": need})
	if err != nil {
		return err
	}
	return s.store.SetOAuthClientsNeedApproval(ctx, need, by.UserID, now, e)
}

func conflictSays(err error, message string) error {
	if errors.Is(err, store.ErrConflict) {
		return apperr.New(apperr.Conflict, "%s", message)
	}
	return err
}
