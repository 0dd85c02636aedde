package controlplane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/fanout"
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
	// ExposureWindow is how far back exposure counts what moved or is
	// pending on the same customer or target and action (24 hours by
	// default): thresholds, the automatic ceiling and the second-approver
	// amount compare the total over it.
	ExposureWindow time.Duration
	// ReconcileFirst is how long after a write ends unverified the
	// reconciler first looks it up (ReconcileDue); each look that settles
	// nothing waits twice as long as the one before it, at most ten
	// minutes. ReconcileAttempts bounds the looks and ReconcileWithin the
	// time from the first: then the invocation stays unverified for a
	// person.
	ReconcileFirst    time.Duration
	ReconcileAttempts int
	ReconcileWithin   time.Duration
}

// DefaultConfig is what the console runs with.
var DefaultConfig = Config{DedupWindow: 10 * time.Minute, CallTimeout: 15 * time.Second, LeaseMargin: 15 * time.Second, Workers: 16,
	ClientKeyClaim: time.Minute, ExposureWindow: 24 * time.Hour,
	ReconcileFirst: 15 * time.Second, ReconcileAttempts: 10, ReconcileWithin: 2 * time.Hour}

// Store is what the control plane asks of the database (*store.Store).
// Every state change runs in InTx on a *store.Tx, whose statements stay
// the store's: the control plane's guarded transitions lock and update
// several rows together, and a Tx is where they meet. The rest are reads
// outside a transaction and the few writes that need none.
type Store interface {
	InTx(ctx context.Context, fn func(*store.Tx) error) error
	// Listen follows a NOTIFY channel (the dispatcher's, the task events').
	Listen(ctx context.Context, channel string, fn func(payload string), status func(err error, retry time.Duration))

	Task(ctx context.Context, id string) (store.Task, error)
	GlobalStopped(ctx context.Context) (bool, error)
	BlocksForCustomer(ctx context.Context, customerRef string) ([]store.TargetBlock, error)

	Invocation(ctx context.Context, id string) (store.Invocation, error)
	InvocationsForTask(ctx context.Context, taskID string) ([]store.Invocation, error)
	Successor(ctx context.Context, id string) (store.Invocation, error)
	RecentDuplicate(ctx context.Context, q store.DuplicateQuery) (store.Invocation, error)
	ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]store.Invocation, error)
	PastDeadline(ctx context.Context, now time.Time, limit int) ([]store.Invocation, error)
	WaitingOfCancelledTasks(ctx context.Context, limit int) ([]store.WaitingOfTask, error)
	EventsForTask(ctx context.Context, taskID string) ([]store.Event, error)
	EventsForInvocation(ctx context.Context, invocationID string) ([]store.Event, error)
	StepUpsOf(ctx context.Context, invocationID string) ([]store.StepUp, error)
	ConsentOf(ctx context.Context, invocationID string) (store.Consent, error)

	QueueItem(ctx context.Context, id string, now time.Time) (store.QueueItem, error)
	ClaimCard(ctx context.Context, invocationID string, userID int64, now, until time.Time) (store.Claim, error)
	ReleaseCard(ctx context.Context, invocationID string, userID int64) error
	TargetChanges(ctx context.Context, cardIDs []string) ([]store.TargetChange, error)

	Policy(ctx context.Context, system, action string) (store.Policy, error)
	ActiveBlock(ctx context.Context, customerRef, system, targetID, keyName, keyValue string) (store.TargetBlock, error)
	Policies(ctx context.Context) ([]store.Policy, error)
	EnsurePolicy(ctx context.Context, p store.Policy) error
	ProposalsSince(ctx context.Context, system, action string, since time.Time) ([]store.ProposalSample, error)

	ClaimClientKey(ctx context.Context, taskID, key string, requestHash []byte, at, staleBefore time.Time) (store.ClientKeyClaim, error)
	BindClientKey(ctx context.Context, taskID, key string, claimedAt time.Time, invocationID string) error
	ReleaseClientKey(ctx context.Context, taskID, key string, claimedAt time.Time) error

	// FinishAdapterRequest records a call's outcome in the adapters'
	// request ledger when the transaction that was to record it with the
	// invocation's failed.
	FinishAdapterRequest(ctx context.Context, system, key, state string, result, errJSON json.RawMessage, at time.Time) error

	// The reconciler's sweeps of unverified invocations (ReconcileDue).
	ReconcilesDue(ctx context.Context, now, firstBefore time.Time, limit int) ([]string, error)
	ClaimReconcile(ctx context.Context, invocationID string, now, leaseUntil time.Time) (attempt int, firstAt time.Time, ok bool, _ error)
	FinishReconcile(ctx context.Context, invocationID string, attempt int, outcome string, ended bool, next, now time.Time) error

	// UserByID names the people in events and decisions.
	UserByID(ctx context.Context, id int64) (store.User, error)
}

// Service is the control plane's Go API. The web layer and the assistant
// API call it; neither touches the SQL.
type Service struct {
	store    Store
	registry *adapter.Registry
	cfg      Config
	now      func() time.Time
	log      *slog.Logger
	hooks    testHooks
	// wake pokes this process's dispatcher (RunDispatcher): a NOTIFY
	// heard, or work this process approved or finished after its commit.
	wake chan struct{}
	// slots are the dispatcher's workers, shared with direct sends.
	slots *sendSlots
	// links makes the customer's confirmation link when an invocation is
	// routed to them (MintLinksWith); nil makes none.
	links LinkMinter
	// waits wakes AwaitChange's waiters from one LISTEN.
	waits *fanout.Hub
	// released is closed when the process shuts down (ReleaseWaits):
	// every wait answers at once.
	released     chan struct{}
	releasedOnce sync.Once
}

// New builds the service.
func New(st Store, registry *adapter.Registry, cfg Config, now func() time.Time, log *slog.Logger) *Service {
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
	if cfg.ExposureWindow <= 0 {
		cfg.ExposureWindow = DefaultConfig.ExposureWindow
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultConfig.Workers
	}
	if cfg.ReconcileFirst <= 0 {
		cfg.ReconcileFirst = DefaultConfig.ReconcileFirst
	}
	if cfg.ReconcileAttempts <= 0 {
		cfg.ReconcileAttempts = DefaultConfig.ReconcileAttempts
	}
	if cfg.ReconcileWithin <= 0 {
		cfg.ReconcileWithin = DefaultConfig.ReconcileWithin
	}
	s := &Service{store: st, registry: registry, cfg: cfg, now: now, log: log, wake: make(chan struct{}, 1),
		slots: newSendSlots(cfg.Workers)}
	s.waits, s.released = fanout.New("invocation waits", s.listenInvocations, log), make(chan struct{})
	return s
}

// kick wakes this process's dispatcher to claim now; called after a commit
// that made work claimable (approved, or an in-flight slot freed). Kicks
// while it is busy fold into one more scan; without a running dispatcher
// it does nothing.
func (s *Service) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

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

// testHooks let tests stop the dispatcher, a proposal or a change where
// timing matters; only tests set them (SetHooks, export_test.go), and they
// are nil otherwise.
type testHooks struct {
	// slotWait runs when a dispatch worker must wait for a free send slot.
	slotWait func()
	// beforeStart runs in a worker after its permit, before startSend.
	beforeStart func(invocationID string)
	// idle runs when RunDispatcher has claimed all it could and waits to be
	// woken.
	idle func()
	// beforeExposureLock runs in a proposal's transaction just before it
	// takes the exposure locks; exposureCounted right after it counted the
	// exposure, before it inserts.
	beforeExposureLock, exposureCounted func()
	// changeLocked runs in a re-quote's or an edit's transaction once it
	// holds its locks (the request's and the task's), before it writes;
	// path is "requote" or "edit".
	changeLocked func(path string)
	// beforeSubscribe runs in AwaitChange before it subscribes to the
	// invocation's changes; waiting each time it has read the invocation,
	// found it unchanged and is about to wait.
	beforeSubscribe, waiting func(invocationID string)
	// sweepLookup runs in ReconcileDue once a look is claimed, before the
	// lookup.
	sweepLookup func(invocationID string)
}
