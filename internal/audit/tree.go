// Package audit makes the console's trail verifiable: the RFC 6962 Merkle
// tree over the leaves the database appends (migration 00052), checkpoints
// of it signed as C2SP signed notes, inclusion and consistency proofs, and
// exports an auditor verifies offline. README.md beside it is the format.
package audit

import (
	"crypto/sha256"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// hasher is RFC 6962's with SHA-256, the one the database's trigger uses.
var hasher = rfc6962.DefaultHasher

// LeafHash is the hash of a leaf whose entry is entry: SHA-256(0x00 || entry).
func LeafHash(entry []byte) []byte {
	h := sha256.New()
	h.Write([]byte{0})
	h.Write(entry)
	return h.Sum(nil)
}

// Tree is a tree of leaf hashes held in memory with every full subtree's
// hash, from which roots and proofs of any smaller size are read.
type Tree struct {
	// levels[0] are the leaf hashes; levels[l][i] is the hash of the full
	// subtree of 2^l leaves starting at leaf i·2^l.
	levels [][][]byte
}

// NewTree builds the tree of the given leaf hashes, in index order.
func NewTree(leaves [][]byte) *Tree {
	t := &Tree{levels: [][][]byte{leaves}}
	for l := 0; len(t.levels[l]) > 1; l++ {
		below := t.levels[l]
		up := make([][]byte, len(below)/2)
		for i := range up {
			up[i] = hasher.HashChildren(below[2*i], below[2*i+1])
		}
		t.levels = append(t.levels, up)
	}
	return t
}

// Size is the number of leaves.
func (t *Tree) Size() uint64 { return uint64(len(t.levels[0])) }

// Root is the tree's root hash at size (at most Size).
func (t *Tree) Root(size uint64) ([]byte, error) {
	if size > t.Size() {
		return nil, fmt.Errorf("audit: root of size %d: the tree has %d leaves", size, t.Size())
	}
	r, err := (&compact.RangeFactory{Hash: hasher.HashChildren}).NewRange(0, size, t.rangeHashes(size))
	if err != nil {
		return nil, fmt.Errorf("audit: root of size %d: %w", size, err)
	}
	if size == 0 {
		return hasher.EmptyRoot(), nil
	}
	return r.GetRootHash(nil)
}

// Compact is the tree's compact range [0, size): what Extend needs to
// compute a larger tree's root from the leaves appended since.
func (t *Tree) Compact(size uint64) [][]byte { return t.rangeHashes(size) }

func (t *Tree) rangeHashes(size uint64) [][]byte {
	ids := compact.RangeNodes(0, size, nil)
	out := make([][]byte, len(ids))
	for i, id := range ids {
		out[i] = t.levels[id.Level][id.Index]
	}
	return out
}

// Inclusion is the proof that leaf index is in the tree of size.
func (t *Tree) Inclusion(index, size uint64) ([][]byte, error) {
	if size > t.Size() {
		return nil, fmt.Errorf("audit: inclusion in size %d: the tree has %d leaves", size, t.Size())
	}
	nodes, err := proof.Inclusion(index, size)
	if err != nil {
		return nil, fmt.Errorf("audit: inclusion: %w", err)
	}
	return t.rehash(nodes)
}

// Consistency is the proof that the tree of size1 is a prefix of size2's.
func (t *Tree) Consistency(size1, size2 uint64) ([][]byte, error) {
	if size2 > t.Size() {
		return nil, fmt.Errorf("audit: consistency to size %d: the tree has %d leaves", size2, t.Size())
	}
	nodes, err := proof.Consistency(size1, size2)
	if err != nil {
		return nil, fmt.Errorf("audit: consistency: %w", err)
	}
	return t.rehash(nodes)
}

func (t *Tree) rehash(nodes proof.Nodes) ([][]byte, error) {
	hashes := make([][]byte, len(nodes.IDs))
	for i, id := range nodes.IDs {
		hashes[i] = t.levels[id.Level][id.Index]
	}
	return nodes.Rehash(hashes, hasher.HashChildren)
}

// Extend computes the root and compact range of the tree of from's size
// plus leaves, given from, the compact range of the smaller tree.
func Extend(size uint64, from [][]byte, leaves [][]byte) (root []byte, next [][]byte, err error) {
	r, err := (&compact.RangeFactory{Hash: hasher.HashChildren}).NewRange(0, size, from)
	if err != nil {
		return nil, nil, fmt.Errorf("audit: extend from size %d: %w", size, err)
	}
	for _, l := range leaves {
		if err := r.Append(l, nil); err != nil {
			return nil, nil, fmt.Errorf("audit: extend: %w", err)
		}
	}
	if r.End() == 0 {
		return hasher.EmptyRoot(), nil, nil
	}
	root, err = r.GetRootHash(nil)
	if err != nil {
		return nil, nil, fmt.Errorf("audit: extend: %w", err)
	}
	return root, r.Hashes(), nil
}

// VerifyInclusion checks that leafHash is leaf index of the tree of size
// whose root is root.
func VerifyInclusion(index, size uint64, leafHash []byte, p [][]byte, root []byte) error {
	return proof.VerifyInclusion(hasher, index, size, leafHash, p, root)
}

// VerifyConsistency checks that the tree (size1, root1) is a prefix of the
// tree (size2, root2).
func VerifyConsistency(size1, size2 uint64, p [][]byte, root1, root2 []byte) error {
	return proof.VerifyConsistency(hasher, size1, size2, p, root1, root2)
}
