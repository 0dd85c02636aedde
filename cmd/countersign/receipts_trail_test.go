package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"countersign/internal/audit"
	"countersign/internal/receipts"

	"golang.org/x/mod/sumdb/note"
)

// TestReceiptsVerifyChecksTheTrailWithTheAuditKey: with -audit-key (the
// key, a file, or the console's /audit/key URL) the receipt's trail proof
// is checked and said; a checkpoint of another key and a proof changed are
// refused with exit status 1 and their reason; asked to check the trail, a
// receipt that carries none is refused; without -audit-key a proof carried
// is said to be unchecked.
func TestReceiptsVerifyChecksTheTrailWithTheAuditKey(t *testing.T) {
	signer, err := receipts.NewSigner(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	trailKey := func(name string) audit.Keys {
		skey, _, err := audit.GenerateKey(name)
		if err != nil {
			t.Fatal(err)
		}
		k, err := audit.LoadKeys(skey)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	keys, otherKeys := trailKey("countersign.test/audit"), trailKey("countersign.test/audit")
	var entries []string
	var hashes [][]byte
	for i := range 5 {
		e := fmt.Sprintf(`{"id": %d, "kind": "event", "invocation_id": "inv_%d"}`, i, i%2)
		entries, hashes = append(entries, e), append(hashes, audit.LeafHash([]byte(e)))
	}
	tree := audit.NewTree(hashes)
	root, _ := tree.Root(5)
	cp := audit.Checkpoint{Origin: keys.Verifier.Name(), Size: 5, Root: root, Time: time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)}
	proof := func(signedBy audit.Keys, change func(p *audit.WriteProof)) *audit.WriteProof {
		msg, err := audit.Sign(cp, signedBy.Signer)
		if err != nil {
			t.Fatal(err)
		}
		p := &audit.WriteProof{Checkpoint: string(msg)}
		for _, i := range []int{1, 3} {
			pr, _ := tree.Inclusion(uint64(i), 5)
			p.Leaves = append(p.Leaves, audit.ProvenLeaf{Index: int64(i), Entry: entries[i], Proof: pr})
		}
		if change != nil {
			change(p)
		}
		return p
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	receipt := func(name string, p *audit.WriteProof) string {
		claims := map[string]any{"sub": "inv_1", "iat": 1, "task_id": "tsk_9", "system": "shop", "action": "issue_refund", "state": "completed",
			"target": map[string]any{"kind": "order", "id": "ord_1", "display": "Order ord_1"}, "args": map[string]any{}}
		if p != nil {
			claims["trail"] = p
		}
		jws, err := signer.Sign(claims)
		if err != nil {
			t.Fatal(err)
		}
		return write(name, jws)
	}
	jwks := write("jwks.json", string(mustJSON(t, signer.JWKS())))
	keyFile := write("audit.key", keys.VerifierKey+"\n")
	served := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(keys.VerifierKey)) }))
	defer served.Close()

	for _, tc := range []struct {
		name, key, receipt string
		code               int
		want               string
	}{
		{"the key as text", keys.VerifierKey, receipt("ok.jws", proof(keys, nil)), 0,
			"Trail:        2 leaves of this write (1 to 3) are in the checkpoint of size 5 signed by countersign.test/audit at 2026-12-08T00:00:00Z"},
		{"the key from a file", keyFile, receipt("ok.jws", proof(keys, nil)), 0, "Trail:        2 leaves of this write"},
		{"the key from /audit/key", served.URL + "/audit/key", receipt("ok.jws", proof(keys, nil)), 0, "Trail:        2 leaves of this write"},
		{"no key: not checked", "", receipt("ok.jws", proof(keys, nil)), 0, "Trail:        2 leaves with proofs, not checked (give -audit-key to check them)"},
		{"a checkpoint of another key", keys.VerifierKey, receipt("other.jws", proof(otherKeys, nil)), 1,
			fmt.Sprintf("NOT VALID: signed with key %s, but checkpoint: not signed by the trail's key %s+%08x (signed by %s+%08x)",
				signer.KeyID(), keys.Verifier.Name(), keys.Verifier.KeyHash(), otherKeys.Verifier.Name(), otherKeys.Verifier.KeyHash())},
		{"a proof changed", keys.VerifierKey, receipt("changed.jws", proof(keys, func(p *audit.WriteProof) { p.Leaves[1].Proof[0][3] ^= 1 })), 1,
			"NOT VALID: signed with key " + signer.KeyID() + ", but trail: leaf 3: not in the checkpoint's tree of size 5: the entry or its proof was changed"},
		{"a leaf not in the tree", keys.VerifierKey, receipt("beyond.jws", proof(keys, func(p *audit.WriteProof) { p.Leaves[1].Index = 7 })), 1,
			"NOT VALID: signed with key " + signer.KeyID() + ", but trail: leaf 7: not in the checkpoint's tree of size 5"},
		{"no trail carried", keys.VerifierKey, receipt("none.jws", nil), 1,
			"NOT VALID: signed with key " + signer.KeyID() + ", but trail: the receipt carries no proof of its write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"verify", "-jwks", jwks}
			if tc.key != "" {
				args = append(args, "-audit-key", tc.key)
			}
			var stdout, stderr bytes.Buffer
			code := runReceipts(context.Background(), append(args, tc.receipt), nil, &stdout, &stderr)
			if out := stdout.String() + stderr.String(); code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want %d; output:\n%s\nwant it to hold %q", code, tc.code, out, tc.want)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAnAuditKeyIsReadWhateverItsBase64Holds: a verifier key given as text
// is read as the key whatever "+" its base64 holds (a key with more than
// the two separators' was once taken for a file name), and a file holding
// one is still read as a file.
func TestAnAuditKeyIsReadWhateverItsBase64Holds(t *testing.T) {
	var vkey string
	for vkey == "" || strings.Count(vkey, "+") <= 2 {
		_, v, err := note.GenerateKey(rand.Reader, "countersign.test/audit")
		if err != nil {
			t.Fatal(err)
		}
		vkey = v
	}
	if v, err := readAuditKey(t.Context(), vkey); err != nil || v.Name() != "countersign.test/audit" {
		t.Fatalf("readAuditKey(%q) = %v, %v; want the key", vkey, v, err)
	}
	file := filepath.Join(t.TempDir(), "audit.key")
	if err := os.WriteFile(file, []byte(vkey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v, err := readAuditKey(t.Context(), file); err != nil || v.Name() != "countersign.test/audit" {
		t.Fatalf("readAuditKey(file) = %v, %v; want the key", v, err)
	}
}
