package audit_test

import (
	"bytes"
	"fmt"
	"testing"

	"countersign/internal/audit"
)

// TestTreeProofsVerifyAtEverySize: for trees of 1 to 33 leaves, every
// inclusion and consistency proof the tree gives verifies (RFC 6962, the
// transparency-dev verifier), and extending a smaller tree's compact
// range gives the same root as the whole tree.
func TestTreeProofsVerifyAtEverySize(t *testing.T) {
	t.Parallel()
	var leaves [][]byte
	for i := range 33 {
		leaves = append(leaves, audit.LeafHash(fmt.Appendf(nil, "entry %d", i)))
	}
	tree := audit.NewTree(leaves)
	for size := uint64(1); size <= 33; size++ {
		root, err := tree.Root(size)
		if err != nil {
			t.Fatal(err)
		}
		for i := range size {
			p, err := tree.Inclusion(i, size)
			if err == nil {
				err = audit.VerifyInclusion(i, size, leaves[i], p, root)
			}
			if err != nil {
				t.Fatalf("leaf %d of %d: %v", i, size, err)
			}
		}
		for from := uint64(1); from <= size; from++ {
			small, _ := tree.Root(from)
			p, err := tree.Consistency(from, size)
			if err == nil {
				err = audit.VerifyConsistency(from, size, p, small, root)
			}
			if err != nil {
				t.Fatalf("consistency %d to %d: %v", from, size, err)
			}
			extended, _, err := audit.Extend(from, tree.Compact(from), leaves[from:size])
			if err != nil || !bytes.Equal(extended, root) {
				t.Fatalf("extending %d to %d: %x (%v), want %x", from, size, extended, err, root)
			}
		}
	}
}
