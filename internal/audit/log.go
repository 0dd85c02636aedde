package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"countersign/internal/apperr"
	"countersign/store"
)

// Store is what the trail reads and writes of the database.
type Store interface {
	TrailSize(ctx context.Context) (int64, error)
	TrailLeafHashes(ctx context.Context, from, to int64) ([][]byte, error)
	TrailLeaves(ctx context.Context, f store.TrailFilter) ([]store.TrailLeaf, error)
	TrailLeavesOfInvocation(ctx context.Context, invocationID string, size int64) ([]store.TrailLeaf, error)
	RecordTrailEvent(ctx context.Context, e store.Event) error
	TrailBounds(ctx context.Context, from, to time.Time, size int64) (before, after *store.TrailLeaf, err error)
	InsertTrailCheckpoint(ctx context.Context, c store.TrailCheckpoint) (bool, error)
	LatestTrailCheckpoint(ctx context.Context) (store.TrailCheckpoint, error)
	TrailCheckpointOfSize(ctx context.Context, size int64) (store.TrailCheckpoint, error)
	TrailCheckpoints(ctx context.Context, below int64, limit int) ([]store.TrailCheckpoint, error)
}

// Log signs checkpoints of the trail and answers proofs of it. Several
// consoles may share one database: a checkpoint of a size is stored once,
// by whichever signs it first, and each console's later checkpoint
// extends the stored one, so history once signed cannot be signed again
// differently.
type Log struct {
	store Store
	keys  Keys
	now   func() time.Time

	mu   sync.Mutex
	tree *Tree // the leaves up to the latest checkpoint this process checked
}

// NewLog makes the trail's log over st, signing with keys.
func NewLog(st Store, keys Keys, now func() time.Time) *Log {
	if now == nil {
		now = time.Now
	}
	return &Log{store: st, keys: keys, now: now}
}

// Keys are the keys the log signs with.
func (l *Log) Keys() Keys { return l.keys }

// ErrRewritten says the trail's stored leaves no longer hash to a root the
// log signed: a leaf was changed, removed or inserted under the triggers.
var ErrRewritten = errors.New("the trail's leaves no longer hash to the signed checkpoint: the trail was rewritten")

// Sign signs a checkpoint of the trail as it is now and stores it; with
// nothing appended since the latest, it returns the latest. The new root
// is computed from the latest checkpoint's compact range and the leaves
// appended since, so it always extends what was signed.
func (l *Log) Sign(ctx context.Context) (store.TrailCheckpoint, error) {
	latest, err := l.store.LatestTrailCheckpoint(ctx)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.TrailCheckpoint{}, fmt.Errorf("audit.Sign: %w", err)
	}
	size, err := l.store.TrailSize(ctx)
	if err != nil {
		return store.TrailCheckpoint{}, fmt.Errorf("audit.Sign: %w", err)
	}
	if size == 0 {
		return store.TrailCheckpoint{}, &apperr.Error{Kind: apperr.Conflict, Code: "trail_empty",
			Message: "The trail has no entry yet: there is nothing to sign."}
	}
	if size == latest.Size {
		return latest, nil
	}
	leaves, err := l.store.TrailLeafHashes(ctx, latest.Size, size)
	if err != nil {
		return store.TrailCheckpoint{}, fmt.Errorf("audit.Sign: %w", err)
	}
	root, compact, err := Extend(uint64(latest.Size), latest.Compact, leaves)
	if err != nil {
		return store.TrailCheckpoint{}, fmt.Errorf("audit.Sign: %w", err)
	}
	at := l.now().UTC().Truncate(time.Second)
	msg, err := Sign(Checkpoint{Origin: l.keys.Verifier.Name(), Size: uint64(size), Root: root, Time: at}, l.keys.Signer)
	if err != nil {
		return store.TrailCheckpoint{}, err
	}
	cp := store.TrailCheckpoint{Size: size, Root: root, Compact: compact, SignedAt: at, Note: string(msg)}
	stored, err := l.store.InsertTrailCheckpoint(ctx, cp)
	if err != nil {
		return store.TrailCheckpoint{}, fmt.Errorf("audit.Sign: %w", err)
	}
	if !stored {
		return l.store.TrailCheckpointOfSize(ctx, size)
	}
	return cp, nil
}

// SignEvery signs a checkpoint every interval until ctx ends; a failure is
// logged and tried again at the next tick.
func (l *Log) SignEvery(ctx context.Context, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := l.Sign(ctx); err != nil && !apperr.Is(err, apperr.Conflict) {
				log.Error("audit: sign checkpoint", "err", err)
			}
		}
	}
}

// TreeAt returns the tree of the trail up to a signed checkpoint, checking
// that the leaves stored still hash to its root (ErrRewritten if not).
func (l *Log) TreeAt(ctx context.Context, cp store.TrailCheckpoint) (*Tree, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tree == nil || l.tree.Size() < uint64(cp.Size) {
		from := uint64(0)
		var leaves [][]byte
		if l.tree != nil {
			from, leaves = l.tree.Size(), l.tree.levels[0]
		}
		more, err := l.store.TrailLeafHashes(ctx, int64(from), cp.Size)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("audit: checkpoint of size %d: %w", cp.Size, ErrRewritten)
		}
		if err != nil {
			return nil, fmt.Errorf("audit.TreeAt(%d): %w", cp.Size, err)
		}
		l.tree = NewTree(append(leaves[:from:from], more...))
	}
	root, err := l.tree.Root(uint64(cp.Size))
	if err != nil {
		return nil, err
	}
	if !equalRoots(root, cp.Root) {
		l.tree = nil
		return nil, fmt.Errorf("audit: checkpoint of size %d: %w", cp.Size, ErrRewritten)
	}
	return l.tree, nil
}

// Inclusion is the proof that leaf index is in the tree of the signed
// checkpoint of size, with the leaf's hash.
func (l *Log) Inclusion(ctx context.Context, index, size int64) (leafHash []byte, proof [][]byte, err error) {
	tree, err := l.signedTree(ctx, size)
	if err != nil {
		return nil, nil, err
	}
	if index < 0 || index >= size {
		return nil, nil, &apperr.Error{Kind: apperr.Invalid, Message: "No leaf of that index in that tree.",
			Fields: map[string]string{"index": fmt.Sprintf("a leaf index from 0 to %d", size-1)}}
	}
	proof, err = tree.Inclusion(uint64(index), uint64(size))
	return tree.levels[0][index], proof, err
}

// Consistency is the proof that the tree of size from is a prefix of the
// tree of the signed checkpoint of size to.
func (l *Log) Consistency(ctx context.Context, from, to int64) ([][]byte, error) {
	tree, err := l.signedTree(ctx, to)
	if err != nil {
		return nil, err
	}
	if from < 1 || from > to {
		return nil, &apperr.Error{Kind: apperr.Invalid, Message: "No tree of that size to prove.",
			Fields: map[string]string{"from": fmt.Sprintf("a tree size from 1 to %d", to)}}
	}
	return tree.Consistency(uint64(from), uint64(to))
}

// signedTree is the tree of the signed checkpoint of size.
func (l *Log) signedTree(ctx context.Context, size int64) (*Tree, error) {
	cp, err := l.store.TrailCheckpointOfSize(ctx, size)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &apperr.Error{Kind: apperr.NotFound, Message: "No checkpoint of that size was signed.",
			Hint: "Ask for a size listed at /audit/checkpoints."}
	}
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return l.TreeAt(ctx, cp)
}

// Latest is the latest signed checkpoint.
func (l *Log) Latest(ctx context.Context) (store.TrailCheckpoint, error) {
	cp, err := l.store.LatestTrailCheckpoint(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return cp, &apperr.Error{Kind: apperr.NotFound, Code: "no_checkpoint", Message: "No checkpoint was signed yet."}
	}
	return cp, err
}

// Checkpoints lists up to limit signed checkpoints of trees smaller than
// below (0: any), largest first.
func (l *Log) Checkpoints(ctx context.Context, below int64, limit int) ([]store.TrailCheckpoint, error) {
	return l.store.TrailCheckpoints(ctx, below, limit)
}

// Record stores e, the event of a person's action on the trail (a
// checkpoint signed or an export made on the admin's page); it enters the
// trail as a leaf like every event.
func (l *Log) Record(ctx context.Context, e store.Event) error {
	if err := l.store.RecordTrailEvent(ctx, e); err != nil {
		return fmt.Errorf("audit.Record: %w", err)
	}
	return nil
}
