package assistants

import (
	"context"
	"errors"
	"strconv"

	"countersign/internal/apperr"
	"countersign/store"
)

// OwnAssistant returns the console user's own assistant, made on first
// use: what a client acts as when the person connected it to act as
// themselves. It may act for any customer (the person may, in the
// console), starts with every action of every connected system turned on
// (its proposals still route by policy, and the person never approves
// them), and the default maxima; an admin may change its actions and
// maxima like any assistant's, and the person's later consents keep what
// the admin set.
func (s *Service) OwnAssistant(ctx context.Context, userID int64) (Assistant, error) {
	id, err := s.store.OperatorAssistant(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		id, err = s.makeOwn(ctx, userID)
	}
	if err != nil {
		return Assistant{}, err
	}
	return s.Get(ctx, id)
}

// makeOwn makes the person's own assistant and turns its actions on; when
// another consent of the same person made it meanwhile, that one is
// returned as it is.
func (s *Service) makeOwn(ctx context.Context, userID int64) (string, error) {
	name := "own-" + strconv.FormatInt(userID, 10)
	for try := 0; ; try++ {
		id := newID("ast")
		err := s.store.InsertOperatorAssistant(ctx, userID, store.Assistant{ID: id, Name: name, CreatedAt: s.now()})
		if err == nil {
			return id, s.EnableAll(ctx, id)
		}
		if !errors.Is(err, store.ErrConflict) || try == 2 {
			return "", err
		}
		// Another consent of the same person made it meanwhile, or an
		// admin's assistant has the name: then another name.
		if other, err := s.store.OperatorAssistant(ctx, userID); !errors.Is(err, store.ErrNotFound) {
			return other, err
		}
		name = "own-" + strconv.FormatInt(userID, 10) + "-" + randomHex(2)
	}
}

// Configured lists the assistants an admin configured that are enabled:
// what a person may let a client act as, besides themselves. Own
// assistants are left out.
func (s *Service) Configured(ctx context.Context) ([]Assistant, error) {
	all, err := s.store.Assistants(ctx)
	if err != nil {
		return nil, err
	}
	own, err := s.store.OperatorAssistants(ctx)
	if err != nil {
		return nil, err
	}
	var out []Assistant
	for _, r := range all {
		if _, mine := own[r.ID]; !mine && r.DisabledAt == nil {
			out = append(out, fromRow(r))
		}
	}
	return out, nil
}

// ForToken returns the assistant an access token acts as, with its
// action switches: when actsFor is set, the person's own assistant,
// bound to them (ActsFor; authserver.Service.Verify checked that it is
// theirs); otherwise a configured one. A disabled assistant is the same
// unauthenticated error as an unknown token.
func (s *Service) ForToken(ctx context.Context, assistantID string, actsFor int64, name string) (Assistant, error) {
	denied := &apperr.Error{Kind: apperr.Unauthenticated, Code: "invalid_token",
		Message: "The access token is unknown, expired or revoked."}
	a, err := s.Get(ctx, assistantID)
	if errors.Is(err, store.ErrNotFound) {
		return Assistant{}, denied
	}
	if err != nil {
		return Assistant{}, err
	}
	if a.Disabled {
		return Assistant{}, denied
	}
	if actsFor != 0 {
		a.ActsFor, a.ActsForName = actsFor, name
	}
	return a, nil
}
