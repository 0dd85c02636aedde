// Package assistants holds the programs that act for customers through the
// JSON API and the MCP server: who they are, the bearer keys they present,
// which actions of which systems each may use (the second of the catalog's
// three filters), the filtered tool catalog, and the conversation events
// they report.
package assistants

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// KeyPrefix starts every API key, so a leaked key is recognisable by
// secret scanners.
const KeyPrefix = "csk_live_"

// Store is what the assistants domain reads and writes (*store.Store):
// assistants, their keys and action switches, and conversation events.
type Store interface {
	Assistant(ctx context.Context, id string) (store.Assistant, error)
	AssistantByName(ctx context.Context, name string) (store.Assistant, error)
	Assistants(ctx context.Context) ([]store.Assistant, error)
	InsertAssistant(ctx context.Context, a store.Assistant) (store.Assistant, error)
	SetAssistantDisabled(ctx context.Context, id string, at *time.Time) error
	SetAssistantGrants(ctx context.Context, id string, g store.AssistantGrants, e store.Event) (store.Assistant, error)
	AssistantActions(ctx context.Context, assistantID string) ([]store.AssistantAction, error)
	SetAssistantAction(ctx context.Context, a store.AssistantAction) error

	APIKeyByHash(ctx context.Context, hash []byte) (store.APIKey, error)
	APIKeys(ctx context.Context) ([]store.APIKey, error)
	InsertAPIKey(ctx context.Context, k store.APIKey) (store.APIKey, error)
	RevokeAPIKey(ctx context.Context, id string, at time.Time) (store.APIKey, error)
	TouchAPIKey(ctx context.Context, id string, at time.Time) error
	OpenTaskCount(ctx context.Context, assistantID string, now time.Time) (int64, error)

	ClaimConversation(ctx context.Context, id, assistantID string, at time.Time) (owner string, err error)
	InsertConversationEvent(ctx context.Context, e store.ConversationEvent) (store.ConversationEvent, error)
	TakeEventWindows(ctx context.Context, windows []store.EventWindow) (full int, err error)
	PruneEventWindows(ctx context.Context, before time.Time) (int64, error)
	ConversationOwner(ctx context.Context, id string) (string, error)
	ConversationLog(ctx context.Context, conversationID string, limit int) ([]store.ConversationEntry, error)
	HandoffTakeovers(ctx context.Context, conversationID string) ([]store.HandoffTakeover, error)
	InTx(ctx context.Context, fn func(*store.Tx) error) error

	OperatorAssistant(ctx context.Context, userID int64) (string, error)
	InsertOperatorAssistant(ctx context.Context, userID int64, a store.Assistant) error
	OperatorAssistants(ctx context.Context) (map[string]int64, error)
}

// Service manages assistants and their keys and answers for them.
type Service struct {
	store Store
	cp    *controlplane.Service
	// registry is the set of connected systems: the actions an assistant
	// may turn on and list.
	registry *adapter.Registry
	now      func() time.Time
	// siteSecrets are the per-system secrets the businesses' sites sign
	// task assertions with (SetSiteSecrets).
	siteSecrets map[string][]byte
	// eventLimits bound conversation events; nil is DefaultEventLimits.
	eventLimits *EventLimits
}

// New returns the service over the control plane cp and the connected
// systems of registry (the control plane's); now is the clock (time.Now
// when nil).
func New(st Store, cp *controlplane.Service, registry *adapter.Registry, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, cp: cp, registry: registry, now: now}
}

// Assistant is an assistant with its keys and action switches.
type Assistant struct {
	ID        string
	Name      string
	CreatedAt time.Time
	Disabled  bool
	Keys      []Key
	// Enabled holds "system/action" for every action turned on.
	Enabled map[string]bool
	// Grants bound its tasks' limits and say whether it may act for any
	// customer.
	Grants Grants
	// KeyID is the key a request authenticated with (Authenticate); empty
	// when the assistant was read otherwise.
	KeyID string
	// GrantID is the OAuth grant a request's access token belongs to
	// (set by the MCP server); empty otherwise.
	GrantID string
	// ActsFor is the console user whose own assistant this is (a client
	// they connected to act as themselves), with their name; zero for an
	// assistant an admin configured.
	ActsFor     int64
	ActsForName string
}

// Key is an API key as it may be shown: its prefix, never its secret.
type Key struct {
	ID          string
	AssistantID string
	// Prefix is the start of the secret, e.g. "csk_live_ab12", for display.
	Prefix     string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// Revoked reports whether the key no longer authenticates.
func (k Key) Revoked() bool { return k.RevokedAt != nil }

// Actor is the control-plane actor of the assistant, with the key it
// authenticated with: the control plane records a write it asks for only
// while that key is live (controlplane.Actor.KeyID).
func (a Assistant) Actor() controlplane.Actor {
	act := controlplane.AssistantActor(a.ID, a.Name)
	act.KeyID, act.GrantID = a.KeyID, a.GrantID
	if a.ActsFor != 0 {
		// The timeline names the person it acts for, not "own-12".
		act.Name = a.ActsForName + "'s own assistant"
		act.AccountableUserID, act.AccountableName = a.ActsFor, a.ActsForName
	}
	return act
}

// Create adds an assistant. A blank or taken name is an invalid-input error
// naming the field "name".
func (s *Service) Create(ctx context.Context, createdBy *int64, name string) (Assistant, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return Assistant{}, apperr.InvalidFields(map[string]string{"name": "Give the assistant a name."})
	case len(name) > 80 || strings.ContainsAny(name, " \t\r\n"):
		return Assistant{}, apperr.InvalidFields(map[string]string{"name": "Use one word of at most 80 characters, e.g. support-bot."})
	}
	row, err := s.store.InsertAssistant(ctx, store.Assistant{ID: newID("ast"), Name: name, CreatedBy: createdBy, CreatedAt: s.now()})
	if errors.Is(err, store.ErrConflict) {
		return Assistant{}, apperr.InvalidFields(map[string]string{"name": "An assistant with this name exists already."})
	}
	if err != nil {
		return Assistant{}, err
	}
	return fromRow(row), nil
}

// SetDisabled disables an assistant (its keys stop working at once) or
// enables it again; not found when there is no such assistant.
func (s *Service) SetDisabled(ctx context.Context, id string, disabled bool) error {
	var at *time.Time
	if disabled {
		now := s.now()
		at = &now
	}
	return s.store.SetAssistantDisabled(ctx, id, at)
}

// List returns every assistant with its keys and action switches.
func (s *Service) List(ctx context.Context) ([]Assistant, error) {
	rows, err := s.store.Assistants(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := s.store.APIKeys(ctx)
	if err != nil {
		return nil, err
	}
	actions, err := s.store.AssistantActions(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]Assistant, len(rows))
	index := map[string]int{}
	for i, r := range rows {
		out[i] = fromRow(r)
		index[r.ID] = i
	}
	for _, k := range keys {
		if i, ok := index[k.AssistantID]; ok {
			out[i].Keys = append(out[i].Keys, keyFromRow(k))
		}
	}
	for _, a := range actions {
		if i, ok := index[a.AssistantID]; ok && a.Enabled {
			out[i].Enabled[a.System+"/"+a.Action] = true
		}
	}
	return out, nil
}

// Get returns one assistant with its action switches (not its keys); not
// found when there is none.
func (s *Service) Get(ctx context.Context, id string) (Assistant, error) {
	row, err := s.store.Assistant(ctx, id)
	if err != nil {
		return Assistant{}, err
	}
	a := fromRow(row)
	return a, s.loadEnabled(ctx, &a)
}

// ByName returns the assistant of that name (names are case-insensitive),
// without its keys or action switches; not found when there is none.
func (s *Service) ByName(ctx context.Context, name string) (Assistant, error) {
	row, err := s.store.AssistantByName(ctx, name)
	if err != nil {
		return Assistant{}, err
	}
	return fromRow(row), nil
}

func (s *Service) loadEnabled(ctx context.Context, a *Assistant) error {
	actions, err := s.store.AssistantActions(ctx, a.ID)
	if err != nil {
		return err
	}
	for _, x := range actions {
		if x.Enabled {
			a.Enabled[x.System+"/"+x.Action] = true
		}
	}
	return nil
}

// SetAction turns one action of a connected system on or off for an
// assistant. An unknown system or action is an invalid-input error.
func (s *Service) SetAction(ctx context.Context, assistantID, system, action string, enabled bool) error {
	if _, _, err := s.registry.Action(system, action); err != nil {
		return apperr.InvalidFields(map[string]string{"action": fmt.Sprintf("%s/%s is not an action of a connected system", system, action)})
	}
	if _, err := s.Get(ctx, assistantID); err != nil {
		return err
	}
	return s.store.SetAssistantAction(ctx, store.AssistantAction{AssistantID: assistantID, System: system, Action: action, Enabled: enabled})
}

// EnableAll turns on every action of every connected system for an
// assistant.
func (s *Service) EnableAll(ctx context.Context, assistantID string) error {
	for _, sys := range s.registry.Systems() {
		for _, a := range sys.Actions() {
			if err := s.SetAction(ctx, assistantID, sys.Name(), a.Name, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// IssueKey creates a key for an assistant and returns it with its secret,
// which is shown once and never stored.
func (s *Service) IssueKey(ctx context.Context, assistantID string, createdBy *int64) (Key, string, error) {
	secret := KeyPrefix + randomHex(20)
	k, err := s.storeKey(ctx, assistantID, createdBy, secret)
	return k, secret, err
}

// RestoreKey makes a secret issued earlier and kept outside the database
// (a credentials file that outlived its database) a live key of the
// assistant again. A secret that already is one of its live keys is
// returned as it is. Errors: Invalid when the secret is not shaped like a
// key; Conflict when the secret was revoked or belongs to another
// assistant (a revoked key never comes back; issue a new one); the
// errors of IssueKey.
func (s *Service) RestoreKey(ctx context.Context, assistantID string, createdBy *int64, secret string) (Key, error) {
	if !strings.HasPrefix(secret, KeyPrefix) || len(secret) < len(KeyPrefix)+16 || len(secret) > 200 {
		return Key{}, apperr.InvalidFields(map[string]string{"key": "A key starts with " + KeyPrefix + " followed by at least 16 characters."})
	}
	h := sha256.Sum256([]byte(secret))
	k, err := s.store.APIKeyByHash(ctx, h[:])
	switch {
	case errors.Is(err, store.ErrNotFound):
		return s.storeKey(ctx, assistantID, createdBy, secret)
	case err != nil:
		return Key{}, err
	case k.AssistantID != assistantID || k.RevokedAt != nil:
		return Key{}, apperr.New(apperr.Conflict, "This key was revoked or belongs to another assistant; issue a new one.")
	}
	return keyFromRow(k), nil
}

func (s *Service) storeKey(ctx context.Context, assistantID string, createdBy *int64, secret string) (Key, error) {
	a, err := s.store.Assistant(ctx, assistantID)
	if err != nil {
		return Key{}, err
	}
	if a.DisabledAt != nil {
		return Key{}, &apperr.Error{Kind: apperr.IllegalTransition, Code: "assistant_is_disabled",
			Message: "This assistant is disabled; enable it before issuing a key."}
	}
	h := sha256.Sum256([]byte(secret))
	row, err := s.store.InsertAPIKey(ctx, store.APIKey{ID: newID("key"), AssistantID: assistantID,
		Prefix: secret[:len(KeyPrefix)+4], Hash: h[:], CreatedBy: createdBy, CreatedAt: s.now()})
	if err != nil {
		return Key{}, err
	}
	return keyFromRow(row), nil
}

// RevokeKey revokes a key at once; not found when it does not exist or is
// revoked already.
func (s *Service) RevokeKey(ctx context.Context, keyID string) (Key, error) {
	row, err := s.store.RevokeAPIKey(ctx, keyID, s.now())
	if err != nil {
		return Key{}, err
	}
	return keyFromRow(row), nil
}

// Authenticate finds the assistant of a bearer secret. Every failure —
// unknown, revoked, disabled assistant — is the same unauthenticated error,
// so a caller learns nothing about which keys exist. A successful use is
// recorded at most once a minute.
func (s *Service) Authenticate(ctx context.Context, secret string) (Assistant, Key, error) {
	denied := &apperr.Error{Kind: apperr.Unauthenticated, Code: "invalid_api_key",
		Message: "The API key is missing, unknown or revoked.",
		Hint:    "Send Authorization: Bearer csk_live_…; an admin issues keys on /admin/assistants."}
	if !strings.HasPrefix(secret, KeyPrefix) || len(secret) > 200 {
		return Assistant{}, Key{}, denied
	}
	h := sha256.Sum256([]byte(secret))
	k, err := s.store.APIKeyByHash(ctx, h[:])
	if errors.Is(err, store.ErrNotFound) {
		return Assistant{}, Key{}, denied
	}
	if err != nil {
		return Assistant{}, Key{}, err
	}
	if k.RevokedAt != nil {
		return Assistant{}, Key{}, denied
	}
	row, err := s.store.Assistant(ctx, k.AssistantID)
	if err != nil {
		return Assistant{}, Key{}, err
	}
	if row.DisabledAt != nil {
		return Assistant{}, Key{}, denied
	}
	if err := s.store.TouchAPIKey(ctx, k.ID, s.now()); err != nil {
		return Assistant{}, Key{}, err
	}
	a := fromRow(row)
	a.KeyID = k.ID
	return a, keyFromRow(k), s.loadEnabled(ctx, &a)
}

func fromRow(r store.Assistant) Assistant {
	return Assistant{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt, Disabled: r.DisabledAt != nil, Enabled: map[string]bool{},
		Grants: grantsFromRow(r)}
}

func keyFromRow(k store.APIKey) Key {
	return Key{ID: k.ID, AssistantID: k.AssistantID, Prefix: k.Prefix, CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt}
}

func newID(prefix string) string { return prefix + "_" + randomHex(10) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// OpenTasks is how many of the assistant's tasks are open now (active or
// paused, not expired): what the admin's confirmation of a revoke or a
// disable names before the assistant loses its way in.
func (s *Service) OpenTasks(ctx context.Context, assistantID string) (int64, error) {
	return s.store.OpenTaskCount(ctx, assistantID, s.now())
}
