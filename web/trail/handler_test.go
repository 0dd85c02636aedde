package trail_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/mod/sumdb/note"

	"countersign/internal/audit"
	"countersign/store"
	"countersign/store/dbtest"
	"countersign/web/trail"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestAnAuditorChecksTheTrailFromItsPublicRoutes: with no account, an
// auditor fetches the verifier key, the latest checkpoint (which opens
// with that key), an inclusion proof of a leaf and the consistency proof
// between two checkpoints, and each verifies.
func TestAnAuditorChecksTheTrailFromItsPublicRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(dbtest.New(t))
	skey, _, err := audit.GenerateKey("countersign.test/audit")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := audit.LoadKeys(skey)
	if err != nil {
		t.Fatal(err)
	}
	log := audit.NewLog(st, keys, nil)
	add := func(n int) store.TrailCheckpoint {
		err := st.InTx(ctx, func(tx *store.Tx) error {
			for range n {
				if _, err := tx.InsertEvent(ctx, store.Event{At: time.Now(), ActorKind: "system", ActorID: "t", Action: "task.created"}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		cp, err := log.Sign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return cp
	}
	first := add(3)
	add(4)
	e := echo.New()
	for _, r := range trail.New(log).Routes() {
		if !r.Allow.Public {
			t.Errorf("%s is not public", r.Path)
		}
		e.Add(r.Method, r.Path, r.Handler)
	}
	srv := httptest.NewServer(e)
	defer srv.Close()
	get := func(path string) []byte {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
		}
		return b
	}
	v, err := note.NewVerifier(string(get("/audit/key")[:len(get("/audit/key"))-1]))
	if err != nil {
		t.Fatal(err)
	}
	latest, err := audit.OpenCheckpoint(get("/audit/checkpoint"), v)
	if err != nil || latest.Size != 7 {
		t.Fatalf("latest checkpoint: %+v, %v", latest, err)
	}
	var incl struct {
		LeafHash string   `json:"leaf_hash"`
		Proof    []string `json:"proof"`
	}
	if err := json.Unmarshal(get("/audit/inclusion?index=4&size=7"), &incl); err != nil {
		t.Fatal(err)
	}
	if err := audit.VerifyInclusion(4, 7, decode(t, incl.LeafHash), decodeAll(t, incl.Proof), latest.Root); err != nil {
		t.Errorf("inclusion proof: %v", err)
	}
	var cons audit.Consistency
	if err := json.Unmarshal(get("/audit/consistency?from=3&to=7"), &cons); err != nil {
		t.Fatal(err)
	}
	if err := audit.VerifyConsistency(3, 7, decodeAll(t, cons.Proof), first.Root, latest.Root); err != nil {
		t.Errorf("consistency proof: %v", err)
	}
	var list []struct{ Size int64 }
	if err := json.Unmarshal(get("/audit/checkpoints"), &list); err != nil || len(list) != 2 || list[0].Size != 7 {
		t.Errorf("checkpoints %+v (%v), want sizes 7 then 3", list, err)
	}
}

func decode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeAll(t *testing.T, ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = decode(t, s)
	}
	return out
}
