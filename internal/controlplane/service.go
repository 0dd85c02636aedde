package controlplane

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"

	"countersign/internal/adapter"
	"countersign/store"
)

// Config tunes the control plane.
type Config struct {
	// DedupWindow: the same action with the same arguments in the same
	// conversation within this window is the same request, not a new one
	// (ten minutes by default).
	DedupWindow time.Duration
	// CallTimeout bounds one adapter call (execute, verify).
	CallTimeout time.Duration
	// LeaseMargin is added to the time a dispatch may take; a dispatching
	// invocation past its lease is found by the sweeper and becomes
	// unverified.
	LeaseMargin time.Duration
	// Workers is how many writes one dispatcher sends at once.
	Workers int
	// ClientKeyClaim bounds how long a caller's Idempotency-Key stays "in
	// use" while its request is processed. A proposal gives up when it runs
	// this long, so an older unfinished claim is one whose request died (a
	// crash): the next request with the key takes it over.
	ClientKeyClaim time.Duration
}

// DefaultConfig is what the console runs with.
var DefaultConfig = Config{DedupWindow: 10 * time.Minute, CallTimeout: 15 * time.Second, LeaseMargin: 15 * time.Second, Workers: 16,
	ClientKeyClaim: time.Minute}

// Service is the control plane's Go API. The web layer and the assistant
// API call it; neither touches the SQL.
type Service struct {
	store    *store.Store
	registry *adapter.Registry
	cfg      Config
	now      func() time.Time
	log      *slog.Logger
	hooks    testHooks
}

// New builds the service.
func New(st *store.Store, registry *adapter.Registry, cfg Config, now func() time.Time, log *slog.Logger) *Service {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.DedupWindow == 0 {
		cfg.DedupWindow = DefaultConfig.DedupWindow
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = DefaultConfig.CallTimeout
	}
	if cfg.LeaseMargin == 0 {
		cfg.LeaseMargin = DefaultConfig.LeaseMargin
	}
	if cfg.ClientKeyClaim <= 0 {
		cfg.ClientKeyClaim = DefaultConfig.ClientKeyClaim
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultConfig.Workers
	}
	return &Service{store: st, registry: registry, cfg: cfg, now: now, log: log}
}

// Registry is the set of connected systems.
func (s *Service) Registry() *adapter.Registry { return s.registry }

// lease is how long a dispatch may hold its permit before the sweeper
// decides its outcome is unknown: an execute and a verify, plus a margin.
// It runs from the permit and starts again when the request leaves.
func (s *Service) lease() time.Duration { return 2*s.cfg.CallTimeout + s.cfg.LeaseMargin }

func newID(prefix string) string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

// idempotencyKey derives the outbound key from the invocation's own id
// within its task: every attempt of one invocation carries it, a new
// invocation gets a new one.
func idempotencyKey(taskID, invocationID string) string {
	return "cs-" + taskID + "-" + invocationID
}

// DispatchChannel is the PostgreSQL NOTIFY channel that wakes dispatchers
// when an invocation is approved.
const DispatchChannel = "countersign_dispatch"
