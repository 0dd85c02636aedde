package audit

import (
	"encoding/base64"
	"encoding/json"
	"testing"
)

// TestASignedExportMissingThePeriodsFirstLeafFails: an export the trail's
// key signed, but whose lines skip the first leaf of its period (the
// header proving where the period starts), is refused.
func TestASignedExportMissingThePeriodsFirstLeafFails(t *testing.T) {
	t.Parallel()
	skey, _, err := GenerateKey("countersign.test/audit")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := LoadKeys(skey)
	if err != nil {
		t.Fatal(err)
	}
	var leaves [][]byte
	var lines []Line
	for i, at := range []string{"2026-11-30T23:00:00.000000Z", "2026-12-01T01:00:00.000000Z", "2026-12-01T02:00:00.000000Z"} {
		entry := `{"id": ` + string(rune('0'+i)) + `, "kind": "event", "logged_at": "` + at + `"}`
		leaves = append(leaves, LeafHash([]byte(entry)))
		lines = append(lines, Line{Leaf: int64(i), Entry: entry})
	}
	tree := NewTree(leaves)
	root, _ := tree.Root(3)
	note, err := Sign(Checkpoint{Origin: keys.Verifier.Name(), Size: 3, Root: root}, keys.Signer)
	if err != nil {
		t.Fatal(err)
	}
	for i := range lines {
		p, _ := tree.Inclusion(uint64(i), 3)
		lines[i].Proof = encodeAll(p)
	}
	var h Header
	if err := json.Unmarshal([]byte(`{"format":"`+ExportFormat+`","filter":{"from":"2026-12-01T00:00:00Z","to":"2026-12-02T00:00:00Z"}}`), &h); err != nil {
		t.Fatal(err)
	}
	h.Checkpoint, h.Before = string(note), &lines[0]
	for _, tc := range []struct {
		lines []Line
		want  string
	}{
		{lines[1:], ""},
		{lines[2:], "the export starts at leaf 2, but the period starts at leaf 1: leaves 1 to 1 are missing"},
		{lines[1:2], "the export ends before leaf 2, but the period ends before leaf 3: leaves 2 to 2 are missing"},
	} {
		h.Lines = len(tc.lines)
		f, err := writeExport(h, tc.lines, keys.Signer)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Verify(f, keys.Verifier, nil)
		if got := errString(err); got != tc.want {
			t.Errorf("lines from leaf %d: got %q, want %q", tc.lines[0].Leaf, got, tc.want)
		}
	}
}

func encodeAll(p [][]byte) []string {
	out := make([]string, len(p))
	for i, h := range p {
		out[i] = base64.StdEncoding.EncodeToString(h)
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
