package audit_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/mod/sumdb/note"

	"countersign/internal/audit"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// bundle is a trail over a fresh database with events in it.
type bundle struct {
	ctx   context.Context
	pool  *pgxpool.Pool
	store *store.Store
	log   *audit.Log
	keys  audit.Keys
	all   audit.Filter
}

func setup(t *testing.T, events int) *bundle {
	t.Helper()
	b := &bundle{ctx: context.Background(), pool: dbtest.New(t)}
	b.store = store.New(b.pool)
	b.keys = newKeys(t, "countersign.test/audit")
	b.log = audit.NewLog(b.store, b.keys, nil)
	b.all = audit.Filter{From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour)}
	b.addEvents(t, events)
	return b
}

func newKeys(t *testing.T, name string) audit.Keys {
	t.Helper()
	skey, _, err := audit.GenerateKey(name)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := audit.LoadKeys(skey)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func (b *bundle) addEvents(t *testing.T, n int) {
	t.Helper()
	err := b.store.InTx(b.ctx, func(tx *store.Tx) error {
		for i := range n {
			if _, err := tx.InsertEvent(b.ctx, store.Event{At: time.Now(), ActorKind: "user", ActorID: "usr_ann",
				Action: "invocation.approved", Data: []byte(fmt.Sprintf(`{"n": %d}`, i))}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// superuser runs SQL as the database's owner would to tamper, with the
// triggers off for the session (session_replication_role = replica).
func (b *bundle) superuser(t *testing.T, q string) {
	t.Helper()
	conn, err := b.pool.Acquire(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, s := range []string{"SET session_replication_role = replica", q, "RESET session_replication_role"} {
		if _, err := conn.Exec(b.ctx, s); err != nil {
			t.Fatal(err)
		}
	}
}

func (b *bundle) export(t *testing.T) audit.Files {
	t.Helper()
	f, err := b.log.Export(b.ctx, b.all)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestAnUntouchedExportVerifies: an export of the period verifies against
// the trail's key, line by line, and against a later checkpoint with the
// consistency proof the console serves.
func TestAnUntouchedExportVerifies(t *testing.T) {
	t.Parallel()
	b := setup(t, 7)
	f := b.export(t)
	r, err := audit.Verify(f, b.keys.Verifier, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lines != 7 || r.First != 0 || r.Last != 6 || r.Checkpoint.Size != 7 {
		t.Errorf("report %+v, want 7 lines, leaves 0 to 6, checkpoint of 7", r)
	}
	b.addEvents(t, 5)
	later, err := b.log.Sign(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := b.log.Consistency(b.ctx, 7, later.Size)
	if err != nil {
		t.Fatal(err)
	}
	c := &audit.Consistency{From: 7, To: uint64(later.Size)}
	for _, p := range proof {
		c.Proof = append(c.Proof, base64.StdEncoding.EncodeToString(p))
	}
	if r, err = audit.Verify(f, b.keys.Verifier, &audit.Later{Checkpoint: []byte(later.Note), Consistency: c}); err != nil || r.Later.Size != 12 {
		t.Fatalf("against the later checkpoint: %v (%+v)", err, r.Later)
	}
	c.Proof[0] = base64.StdEncoding.EncodeToString(make([]byte, 32))
	_, err = audit.Verify(f, b.keys.Verifier, &audit.Later{Checkpoint: []byte(later.Note), Consistency: c})
	want := "the checkpoint of size 7 is not a prefix of the checkpoint of size 12: the trail was rewritten"
	if err == nil || err.Error() != want {
		t.Errorf("a wrong consistency proof: %v, want %q", err, want)
	}
}

// TestTamperingInTheDatabaseIsCaught: rows changed, deleted or inserted
// by a superuser with the triggers off are caught, each with its words.
func TestTamperingInTheDatabaseIsCaught(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, sql, want string
	}{
		{"an event changed", `UPDATE events SET data = '{"n": 99}' WHERE id = 3`,
			"line 4 (leaf 2, event 3): the row differs from what the trail logged: it was changed in the database"},
		{"an event deleted", `DELETE FROM events WHERE id = 3`,
			"line 4 (leaf 2, event 3): the row was deleted from the database"},
		{"an event inserted", `INSERT INTO events (at, actor_kind, actor_id, action) VALUES (now(), 'user', 'usr_eve', 'invocation.approved')`,
			"line 7 (event 6): not in the trail: the row was inserted without its leaf"},
		{"a leaf deleted", `DELETE FROM trail_leaves WHERE idx = 2`,
			"audit.Export: checkpoint of size 5: " + audit.ErrRewritten.Error()},
		{"an event changed and its leaf with it", `
			UPDATE events SET data = '{"n": 99}' WHERE id = 3;
			UPDATE trail_leaves l SET hash = sha256('\x00'::bytea || convert_to(trail_event_entry(e, l.logged_at), 'UTF8'))
			FROM events e WHERE l.idx = 2 AND e.id = 3`,
			"audit.Export: checkpoint of size 5: " + audit.ErrRewritten.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, 5)
			if _, err := b.log.Sign(b.ctx); err != nil {
				t.Fatal(err)
			}
			b.superuser(t, tc.sql)
			f, err := b.log.Export(b.ctx, b.all)
			if err == nil {
				_, err = audit.Verify(f, b.keys.Verifier, nil)
			}
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestTamperingWithTheExportIsCaught: a line changed, dropped or
// reordered, the CSV changed, or keys that are not the trail's.
func TestTamperingWithTheExportIsCaught(t *testing.T) {
	t.Parallel()
	b := setup(t, 5)
	f := b.export(t)
	lines := bytes.SplitAfter(f.JSONL, []byte("\n"))
	edit := func(fn func(ls [][]byte) [][]byte) audit.Files {
		ls := fn(append([][]byte(nil), lines...))
		return audit.Files{JSONL: bytes.Join(ls, nil), CSV: f.CSV, Sig: f.Sig}
	}
	other := newKeys(t, "countersign.test/audit")
	otherSig, err := note.Sign(&note.Note{Text: "countersign audit export\n"}, other.Signer)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		f    audit.Files
		v    note.Verifier
		want string
	}{
		{"a line changed", edit(func(ls [][]byte) [][]byte {
			ls[3] = bytes.Replace(ls[3], []byte(`\"n\": 2`), []byte(`\"n\": 20`), 1)
			return ls
		}), b.keys.Verifier, "line 4 (leaf 2): the line differs from what was exported: it was changed"},
		{"a line dropped", edit(func(ls [][]byte) [][]byte { return append(ls[:3], ls[4:]...) }), b.keys.Verifier,
			"line 4: leaf 3 follows leaf 1: a line was dropped"},
		{"the last line dropped", edit(func(ls [][]byte) [][]byte { return ls[:5] }), b.keys.Verifier,
			"the export has 4 lines, its header says 5: a line was dropped"},
		{"lines reordered", edit(func(ls [][]byte) [][]byte { ls[3], ls[2] = ls[2], ls[3]; return ls }), b.keys.Verifier,
			"line 4: leaf 1 comes after leaf 2: the lines were reordered"},
		{"the CSV changed", audit.Files{JSONL: f.JSONL, CSV: bytes.Replace(f.CSV, []byte("usr_ann"), []byte("usr_bob"), 1), Sig: f.Sig},
			b.keys.Verifier, "CSV line 2 differs from the JSON Lines: it was changed"},
		{"verified with another key", f, other.Verifier, fmt.Sprintf(
			"signature: not signed by the trail's key %s+%08x (signed by %s+%08x)", other.Verifier.Name(), other.Verifier.KeyHash(), other.Verifier.Name(), b.keys.Verifier.KeyHash())},
		{"signed by another key", audit.Files{JSONL: f.JSONL, CSV: f.CSV, Sig: otherSig}, b.keys.Verifier, fmt.Sprintf(
			"signature: not signed by the trail's key %s+%08x (signed by %s+%08x)", b.keys.Verifier.Name(), b.keys.Verifier.KeyHash(), b.keys.Verifier.Name(), other.Verifier.KeyHash())},
	}
	for _, tc := range cases {
		if _, err := audit.Verify(tc.f, tc.v, nil); err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v\nwant %s", tc.name, err, tc.want)
		}
	}
}

// TestACheckpointFromAnotherKeyIsRefused: a later checkpoint the auditor
// holds that another key signed is refused, naming both keys.
func TestACheckpointFromAnotherKeyIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, 3)
	f := b.export(t)
	other := newKeys(t, "countersign.test/audit")
	cp, err := audit.ParseCheckpoint(strings.SplitN(mustHeaderCheckpoint(t, f), "\n\n", 2)[0] + "\n")
	if err != nil {
		t.Fatal(err)
	}
	forged, err := audit.Sign(cp, other.Signer)
	if err != nil {
		t.Fatal(err)
	}
	_, err = audit.Verify(f, b.keys.Verifier, &audit.Later{Checkpoint: forged})
	want := fmt.Sprintf("later checkpoint: not signed by the trail's key %s+%08x (signed by %s+%08x)",
		b.keys.Verifier.Name(), b.keys.Verifier.KeyHash(), b.keys.Verifier.Name(), other.Verifier.KeyHash())
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func mustHeaderCheckpoint(t *testing.T, f audit.Files) string {
	t.Helper()
	_, after, ok := bytes.Cut(f.JSONL, []byte(`"checkpoint":"`))
	if !ok {
		t.Fatal("no checkpoint in the header")
	}
	s, _, _ := strings.Cut(string(after), `"`)
	return strings.ReplaceAll(s, `\n`, "\n")
}

// TestTwoConsolesSigningAtOnceStoreOneCheckpoint: consoles signing the
// same tree at the same moment store one checkpoint and both answer it.
func TestTwoConsolesSigningAtOnceStoreOneCheckpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, 4)
	second := audit.NewLog(b.store, b.keys, nil)
	start := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]store.TrailCheckpoint, 2)
	errs := make([]error, 2)
	for i, l := range []*audit.Log{b.log, second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[i], errs[i] = l.Sign(b.ctx)
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got[0].Note != got[1].Note {
		t.Errorf("the consoles answered different checkpoints:\n%s\n%s", got[0].Note, got[1].Note)
	}
	cps, err := b.store.TrailCheckpoints(b.ctx, 0, 10)
	if err != nil || len(cps) != 1 {
		t.Errorf("%d checkpoints stored (%v), want 1", len(cps), err)
	}
}

// TestAPeriodInTheMiddleIsProvedComplete: an export of a period with
// entries before and after it carries the leaves just outside it, and
// verifies as complete.
func TestAPeriodInTheMiddleIsProvedComplete(t *testing.T) {
	t.Parallel()
	b := setup(t, 2)
	from := time.Now()
	b.addEvents(t, 3)
	to := time.Now()
	b.addEvents(t, 2)
	f, err := b.log.Export(b.ctx, audit.Filter{From: from, To: to})
	if err != nil {
		t.Fatal(err)
	}
	r, err := audit.Verify(f, b.keys.Verifier, nil)
	if err != nil || r.Lines != 3 || r.First != 2 || r.Last != 4 {
		t.Fatalf("%v (%+v), want leaves 2 to 4", err, r)
	}
	if !bytes.Contains(f.JSONL, []byte(`"before":{"leaf":1,`)) || !bytes.Contains(f.JSONL, []byte(`"after":{"leaf":5,`)) {
		t.Errorf("the header does not carry leaves 1 and 5:\n%s", bytes.SplitN(f.JSONL, []byte("\n"), 2)[0])
	}
}
