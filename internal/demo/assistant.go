package demo

import (
	"context"
	"fmt"

	"countersign/internal/apperr"
	"countersign/internal/assistants"
)

// assistantName is the demo assistant's name on first run.
const assistantName = "demo-assistant"

// ensureAssistant makes sure the demo assistant exists, enabled, with every
// action of the connected systems turned on, and returns its name and a
// working key. known is the assistant line of the credentials file, if
// any: its key is kept across runs (restored when the database was reset),
// so the file stays valid; a revoked one is replaced. It fails only on
// database errors.
func ensureAssistant(ctx context.Context, s *assistants.Service, known *Assistant) (Assistant, error) {
	name := assistantName
	if known != nil && known.Name != "" {
		name = known.Name
	}
	a, err := s.ByName(ctx, name)
	if apperr.Is(err, apperr.NotFound) {
		a, err = s.Create(ctx, nil, name)
	}
	if err != nil {
		return Assistant{}, fmt.Errorf("demo: assistant %s: %w", name, err)
	}
	if a.Disabled {
		if err := s.SetDisabled(ctx, a.ID, false); err != nil {
			return Assistant{}, fmt.Errorf("demo: enable assistant %s: %w", name, err)
		}
	}
	if err := s.EnableAll(ctx, a.ID); err != nil {
		return Assistant{}, fmt.Errorf("demo: assistant %s: %w", name, err)
	}
	if known != nil {
		_, err := s.RestoreKey(ctx, a.ID, nil, known.Key)
		if err == nil {
			return Assistant{Name: name, Key: known.Key}, nil
		}
		if !apperr.Is(err, apperr.Invalid) && !apperr.Is(err, apperr.Conflict) {
			return Assistant{}, fmt.Errorf("demo: restore the key of %s: %w", name, err)
		}
	}
	_, key, err := s.IssueKey(ctx, a.ID, nil)
	if err != nil {
		return Assistant{}, fmt.Errorf("demo: issue a key for %s: %w", name, err)
	}
	return Assistant{Name: name, Key: key}, nil
}
