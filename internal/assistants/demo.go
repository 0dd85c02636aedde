package assistants

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"countersign/internal/apperr"
	"countersign/internal/demo"
	"countersign/store"
)

// DemoName is the demo assistant's name.
const DemoName = "demo-assistant"

// EnsureDemo makes sure the demo assistant exists with every action of the
// connected systems turned on, and returns its name and a working key.
// known is the assistant line of the demo credentials file, if any: its key
// is kept across runs (stored again when the database was reset), so the
// file stays valid. It fails only on database errors.
func EnsureDemo(ctx context.Context, s *Service, known *demo.Assistant) (name, key string, err error) {
	name = DemoName
	if known != nil && known.Name != "" {
		name = known.Name
	}
	a, err := s.byName(ctx, name)
	if apperr.Is(err, apperr.NotFound) {
		a, err = s.Create(ctx, nil, name)
	}
	if err != nil {
		return "", "", fmt.Errorf("assistants.EnsureDemo: %w", err)
	}
	if a.Disabled {
		if err := s.SetDisabled(ctx, a.ID, false); err != nil {
			return "", "", fmt.Errorf("assistants.EnsureDemo: %w", err)
		}
	}
	if err := s.EnableAll(ctx, a.ID); err != nil {
		return "", "", fmt.Errorf("assistants.EnsureDemo: %w", err)
	}
	if known != nil && strings.HasPrefix(known.Key, KeyPrefix) && len(known.Key) >= len(KeyPrefix)+16 {
		h := sha256.Sum256([]byte(known.Key))
		k, err := s.store.APIKeyByHash(ctx, h[:])
		switch {
		case err == nil && k.AssistantID == a.ID && k.RevokedAt == nil:
			return name, known.Key, nil
		case errors.Is(err, store.ErrNotFound):
			if _, err := s.storeKey(ctx, a.ID, nil, known.Key); err != nil {
				return "", "", fmt.Errorf("assistants.EnsureDemo: %w", err)
			}
			return name, known.Key, nil
		case err != nil:
			return "", "", fmt.Errorf("assistants.EnsureDemo: %w", err)
		}
	}
	_, key, err = s.IssueKey(ctx, a.ID, nil)
	if err != nil {
		return "", "", fmt.Errorf("assistants.EnsureDemo: %w", err)
	}
	return name, key, nil
}

func (s *Service) byName(ctx context.Context, name string) (Assistant, error) {
	row, err := s.store.AssistantByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return Assistant{}, apperr.Wrap(err, apperr.NotFound, "No such assistant.")
	}
	if err != nil {
		return Assistant{}, err
	}
	return fromRow(row), nil
}
