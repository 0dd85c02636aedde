package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"countersign/internal/accounts"
	"countersign/internal/audit"
	"countersign/internal/controlplane"
	"countersign/internal/receiptcheck"
	"countersign/internal/receipts"
	"countersign/store"
	"countersign/web/webtest"
)

// TestAReceiptCarriesTheTrailProofOfItsWrite: a completed write's receipt
// carries a checkpoint (signed on demand: none covered the write yet) and
// the inclusion proof of each of the invocation's leaves, and verifies
// against the trail's key from GET /audit/key. The same claims with a
// proof or entry changed, a checkpoint of another key, a leaf beyond the
// tree or a leaf of something else — signed again with a receipts key of the test's
// own, so that only the trail's check can catch them — are refused with
// their exact reason.
func TestAReceiptCarriesTheTrailProofOfItsWrite(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	id := b.ProposeRefund(t, b.DamagedOrder(t))
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: b.Users[accounts.Agent].Actor(), InvocationID: id,
		Verb: controlplane.StaffApprove, Version: b.Invocation(t, id).Version, ArgsHash: b.Invocation(t, id).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Control.Dispatch(ctx, id); err != nil {
		t.Fatal(err)
	}
	res := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id+"/receipt", nil).Want(t, http.StatusOK)
	jwks := b.Call(t, "", http.MethodGet, "/api/v1/receipts/jwks.json", nil).Want(t, http.StatusOK).Body
	vkey := b.Call(t, "", http.MethodGet, "/audit/key", nil).Want(t, http.StatusOK).Body
	verifier, err := note.NewVerifier(strings.TrimSpace(string(vkey)))
	if err != nil {
		t.Fatalf("GET /audit/key: %v: %s", err, vkey)
	}
	checked, err := receiptcheck.CheckWithTrail([]byte(res.Body), []byte(jwks), verifier)
	if err != nil {
		t.Fatalf("the receipt as served: %v", err)
	}
	if len(checked.Trail) != 1 || !strings.Contains(checked.Trail[0], "leaves of this write") {
		t.Errorf("trail facts %q", checked.Trail)
	}
	var claims map[string]any
	if err := json.Unmarshal(checked.Claims, &claims); err != nil {
		t.Fatal(err)
	}
	var proof audit.WriteProof
	raw, _ := json.Marshal(claims["trail"])
	if err := json.Unmarshal(raw, &proof); err != nil || len(proof.Leaves) < 3 {
		t.Fatalf("the receipt's trail (want the invocation's creation, its events and state changes): %s", raw)
	}
	cp, err := audit.OpenCheckpoint([]byte(proof.Checkpoint), verifier)
	if err != nil || cp.Size <= uint64(proof.Leaves[len(proof.Leaves)-1].Index) {
		t.Fatalf("the checkpoint %+v does not cover leaf %d: %v", cp, proof.Leaves[len(proof.Leaves)-1].Index, err)
	}

	// A leaf of something else (not this invocation's), with its proof in
	// the same checkpoint, as the console proves any leaf.
	all, err := b.Store.TrailLeaves(ctx, store.TrailFilter{To: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var foreign audit.ProvenLeaf
	for _, l := range all {
		if l.Entry != nil && l.Index >= 0 && uint64(l.Index) < cp.Size && !strings.Contains(*l.Entry, id) {
			foreign = audit.ProvenLeaf{Index: l.Index, Entry: *l.Entry}
			break
		}
	}
	if _, foreign.Proof, err = b.Audit.Inclusion(ctx, foreign.Index, int64(cp.Size)); err != nil || foreign.Entry == "" {
		t.Fatalf("no leaf of another write to prove (%v)", err)
	}
	ownKey := receipts.Ephemeral()
	ownKeys, _ := json.Marshal(ownKey.JWKS())
	skey, _, _ := audit.GenerateKey(verifier.Name())
	otherTrail, _ := audit.LoadKeys(skey)
	otherNote, err := audit.Sign(cp, otherTrail.Signer)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(p *audit.WriteProof)
		want   string
	}{
		{"untouched", func(*audit.WriteProof) {}, ""},
		{"a tampered proof", func(p *audit.WriteProof) { p.Leaves[1].Proof[0][0] ^= 1 },
			"trail: leaf %d: not in the checkpoint's tree of size %d: the entry or its proof was changed"},
		{"a tampered entry", func(p *audit.WriteProof) {
			p.Leaves[1].Entry = strings.Replace(p.Leaves[1].Entry, `"kind"`, `"kind" `, 1)
		},
			"trail: leaf %d: not in the checkpoint's tree of size %d: the entry or its proof was changed"},
		{"a checkpoint from another key", func(p *audit.WriteProof) { p.Checkpoint = string(otherNote) },
			"checkpoint: not signed by the trail's key " + verifier.Name()},
		{"a leaf beyond the tree", func(p *audit.WriteProof) { p.Leaves[1].Index = int64(cp.Size) + 3 },
			"trail: leaf %d: not in the checkpoint's tree of size %d"},
		{"a leaf of another write", func(p *audit.WriteProof) {
			p.Leaves = []audit.ProvenLeaf{foreign}
		}, "trail: leaf " + itoa(foreign.Index) + " is not about invocation " + id},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p audit.WriteProof
			_ = json.Unmarshal(raw, &p)
			tc.change(&p)
			c := map[string]any{}
			for k, v := range claims {
				c[k] = v
			}
			c["trail"] = p
			jws, err := ownKey.Sign(c)
			if err != nil {
				t.Fatal(err)
			}
			_, err = receiptcheck.CheckWithTrail([]byte(jws), ownKeys, verifier)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("resigned untouched: %v", err)
				}
				return
			}
			want := tc.want
			if strings.Contains(want, "%d") {
				want = strings.Replace(strings.Replace(want, "%d", itoa(p.Leaves[1].Index), 1), "%d", itoa(int64(cp.Size)), 1)
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v\nwant the reason %q", err, want)
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
