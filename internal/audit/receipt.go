package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/note"
)

// WriteProof is what a receipt carries of the trail: a signed checkpoint
// and, for every leaf of the receipt's invocation in it (its events and
// its state changes), the entry hashed and its inclusion proof. Anyone
// with the trail's verifier key checks it offline (VerifyWriteProof).
type WriteProof struct {
	// Checkpoint is the signed note of the checkpoint the proofs lead to.
	Checkpoint string `json:"checkpoint"`
	// Leaves are the invocation's leaves, in index order.
	Leaves []ProvenLeaf `json:"leaves"`
}

// ProvenLeaf is one leaf of a WriteProof: its index, the entry's exact
// bytes (what SHA-256(0x00 || entry) hashes) and the inclusion proof.
type ProvenLeaf struct {
	Index int64    `json:"index"`
	Entry string   `json:"entry"`
	Proof [][]byte `json:"proof"`
}

// ProveWrite proves the leaves of invocation id against the latest
// checkpoint. When no signed checkpoint covers them all yet (the write
// committed after the latest was signed), it signs one first, as the
// admin's button does: a receipt always carries a proof it can be checked
// with, never a promise.
func (l *Log) ProveWrite(ctx context.Context, id string) (*WriteProof, error) {
	size, err := l.store.TrailSize(ctx)
	if err != nil {
		return nil, fmt.Errorf("audit.ProveWrite: %w", err)
	}
	leaves, err := l.store.TrailLeavesOfInvocation(ctx, id, size)
	if err != nil {
		return nil, err
	}
	if len(leaves) == 0 {
		return nil, fmt.Errorf("audit.ProveWrite(%s): the invocation has no leaf in the trail", id)
	}
	cp, err := l.store.LatestTrailCheckpoint(ctx)
	if err != nil || cp.Size <= leaves[len(leaves)-1].Index {
		if cp, err = l.Sign(ctx); err != nil {
			return nil, err
		}
	}
	tree, err := l.TreeAt(ctx, cp)
	if err != nil {
		return nil, err
	}
	p := &WriteProof{Checkpoint: cp.Note, Leaves: make([]ProvenLeaf, 0, len(leaves))}
	for _, leaf := range leaves {
		if leaf.Entry == nil {
			return nil, fmt.Errorf("audit.ProveWrite(%s): leaf %d (event %s): the row was deleted from the database", id, leaf.Index, leaf.Ref)
		}
		proof, err := tree.Inclusion(uint64(leaf.Index), uint64(cp.Size))
		if err != nil {
			return nil, err
		}
		p.Leaves = append(p.Leaves, ProvenLeaf{Index: leaf.Index, Entry: *leaf.Entry, Proof: proof})
	}
	return p, nil
}

// ErrNotInTree is the refusal of a receipt's leaf that the checkpoint's
// tree does not hold at its index.
var ErrNotInTree = errors.New("not in the checkpoint's tree")

// VerifyWriteProof checks a receipt's trail proof for invocation id
// against the trail's verifier key: the checkpoint is the key's, every
// leaf's entry hashes into the checkpoint's root at its index, and every
// entry is about the invocation. It returns the checkpoint, or the first
// reason it does not hold, phrased for `countersign receipts verify`.
func VerifyWriteProof(p WriteProof, id string, v note.Verifier) (Checkpoint, error) {
	cp, err := OpenCheckpoint([]byte(p.Checkpoint), v)
	if err != nil {
		return Checkpoint{}, err
	}
	if len(p.Leaves) == 0 {
		return Checkpoint{}, errors.New("trail: the receipt proves no leaf of its write")
	}
	for _, leaf := range p.Leaves {
		if leaf.Index < 0 || uint64(leaf.Index) >= cp.Size {
			return Checkpoint{}, fmt.Errorf("trail: leaf %d: %w of size %d", leaf.Index, ErrNotInTree, cp.Size)
		}
		if err := VerifyInclusion(uint64(leaf.Index), cp.Size, LeafHash([]byte(leaf.Entry)), leaf.Proof, cp.Root); err != nil {
			return Checkpoint{}, fmt.Errorf("trail: leaf %d: %w of size %d: the entry or its proof was changed", leaf.Index, ErrNotInTree, cp.Size)
		}
		var entry struct {
			Kind         string `json:"kind"`
			ID           any    `json:"id"`
			InvocationID string `json:"invocation_id"`
		}
		if err := json.Unmarshal([]byte(leaf.Entry), &entry); err != nil ||
			(entry.Kind == "invocation" && entry.ID != id) || (entry.Kind == "event" && entry.InvocationID != id) ||
			(entry.Kind != "invocation" && entry.Kind != "event") {
			return Checkpoint{}, fmt.Errorf("trail: leaf %d is not about invocation %s", leaf.Index, id)
		}
	}
	return cp, nil
}
