package audit

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// Consistency is a consistency proof as the console serves it
// (GET /audit/consistency?from=M&to=N): the tree of size From is a prefix
// of the tree of size To.
type Consistency struct {
	From  uint64   `json:"from"`
	To    uint64   `json:"to"`
	Proof []string `json:"proof"`
}

// Later is a checkpoint the auditor holds, signed after (or before) the
// export's, with the consistency proof between the two sizes when they
// differ.
type Later struct {
	Checkpoint  []byte
	Consistency *Consistency
}

// Report is what a verified export holds.
type Report struct {
	Lines       int
	First, Last int64
	Checkpoint  Checkpoint
	Later       *Checkpoint
}

// Verify checks an export offline against the trail's verifier key: every
// line's entry is in the signed checkpoint, the lines are in order and,
// unless the export is filtered, contiguous; the CSV says what the JSON
// Lines say; the detached signature covers both; and, given a later
// checkpoint, the export's is a prefix of it. The first failure is
// returned, worded for the auditor (README.md lists them).
func Verify(f Files, v note.Verifier, later *Later) (Report, error) {
	var r Report
	signed, err := signatureMatches(f, v)
	if err != nil {
		return r, err
	}
	sc := bufio.NewScanner(bytes.NewReader(f.JSONL))
	sc.Buffer(nil, 64<<20)
	if !sc.Scan() {
		return r, errors.New("line 1: the export is empty")
	}
	var h Header
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil || h.Format != ExportFormat {
		return r, fmt.Errorf("line 1: not a header of %s", ExportFormat)
	}
	cp, err := OpenCheckpoint([]byte(h.Checkpoint), v)
	if err != nil {
		return r, err
	}
	r.Checkpoint, r.First, r.Last = cp, -1, -1
	var lines []Line
	for n := 2; sc.Scan(); n++ {
		var ln Line
		if err := json.Unmarshal(sc.Bytes(), &ln); err != nil {
			return r, fmt.Errorf("line %d: not an export line: it was changed", n)
		}
		lines = append(lines, ln)
	}
	if err := sc.Err(); err != nil {
		return r, fmt.Errorf("export: %w", err)
	}
	// Order first: two lines swapped also leave a gap where the first was.
	prev := int64(-1)
	for i, ln := range lines {
		if ln.Leaf >= 0 && ln.Leaf <= prev {
			return r, fmt.Errorf("line %d: leaf %d comes after leaf %d: the lines were reordered", i+2, ln.Leaf, prev)
		}
		prev = max(prev, ln.Leaf)
	}
	prev = -1
	for i, ln := range lines {
		if err := checkLine(i+2, ln, prev, h.Filter.Narrowed(), signed, cp); err != nil {
			return r, err
		}
		if ln.Leaf >= 0 {
			if r.First < 0 {
				r.First = ln.Leaf
			}
			prev, r.Last = ln.Leaf, ln.Leaf
		}
	}
	r.Lines = len(lines)
	if len(lines) != h.Lines {
		return r, fmt.Errorf("the export has %d lines, its header says %d: a line was dropped", len(lines), h.Lines)
	}
	if err := checkCSV(lines, f.CSV); err != nil {
		return r, err
	}
	if !signed {
		return r, errors.New("the export does not match its detached signature: it was changed after it was signed")
	}
	if !h.Filter.Narrowed() {
		if err := checkPeriod(h, lines, r.First, r.Last, cp); err != nil {
			return r, err
		}
	}
	if later != nil {
		lc, err := checkLater(cp, *later, v)
		if err != nil {
			return r, err
		}
		r.Later = &lc
	}
	return r, nil
}

// signatureMatches opens the detached signature (failing only for a
// signature of another key or none) and says whether it covers the files
// as they are.
func signatureMatches(f Files, v note.Verifier) (bool, error) {
	n, err := openNote(f.Sig, v)
	if err != nil {
		return false, fmt.Errorf("signature: %w", err)
	}
	return n.Text == sigText(f.JSONL, f.CSV), nil
}

// checkLine checks one line: its place after prev, then its entry's
// inclusion. signed says the files are as exported, so a failure is the
// database's, not the file's.
func checkLine(n int, ln Line, prev int64, narrowed, signed bool, cp Checkpoint) error {
	switch {
	case ln.Unlogged:
		return fmt.Errorf("line %d (%s %s): not in the trail: the row was inserted without its leaf", n, ln.Kind, ln.Ref)
	case ln.Leaf < 0 || uint64(ln.Leaf) >= cp.Size:
		return fmt.Errorf("line %d: leaf %d is not in the checkpoint's tree of %d leaves: the line was changed", n, ln.Leaf, cp.Size)
	case !narrowed && prev >= 0 && ln.Leaf > prev+1 && signed:
		return fmt.Errorf("line %d: leaves %d to %d are missing from the database: the trail was rewritten", n, prev+1, ln.Leaf-1)
	case !narrowed && prev >= 0 && ln.Leaf > prev+1:
		return fmt.Errorf("line %d: leaf %d follows leaf %d: a line was dropped", n, ln.Leaf, prev)
	case ln.Missing:
		return fmt.Errorf("line %d (leaf %d, %s %s): the row was deleted from the database", n, ln.Leaf, ln.Kind, ln.Ref)
	}
	proof := make([][]byte, len(ln.Proof))
	for i, p := range ln.Proof {
		var err error
		if proof[i], err = base64.StdEncoding.DecodeString(p); err != nil {
			return fmt.Errorf("line %d (leaf %d): the proof is not base64: the line was changed", n, ln.Leaf)
		}
	}
	if err := VerifyInclusion(uint64(ln.Leaf), cp.Size, LeafHash([]byte(ln.Entry)), proof, cp.Root); err != nil {
		if signed {
			return fmt.Errorf("line %d (leaf %d, %s): the row differs from what the trail logged: it was changed in the database",
				n, ln.Leaf, entryName(ln.Entry))
		}
		return fmt.Errorf("line %d (leaf %d): the line differs from what was exported: it was changed", n, ln.Leaf)
	}
	return nil
}

// entryName names an entry's row: "event 42", "invocation inv_…".
func entryName(entry string) string {
	var e struct {
		Kind string          `json:"kind"`
		ID   json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal([]byte(entry), &e)
	return e.Kind + " " + strings.Trim(string(e.ID), `"`)
}

// checkCSV derives the CSV from the verified lines and compares.
func checkCSV(lines []Line, got []byte) error {
	want, err := csvOf(lines)
	if err != nil {
		return err
	}
	w, g := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := range max(len(w), len(g)) {
		if i >= len(w) || i >= len(g) || !bytes.Equal(w[i], g[i]) {
			return fmt.Errorf("CSV line %d differs from the JSON Lines: it was changed", i+1)
		}
	}
	return nil
}

// checkLater checks that the export's checkpoint is a prefix of a later
// one's tree (or the later one of it, when it is older).
func checkLater(cp Checkpoint, later Later, v note.Verifier) (Checkpoint, error) {
	lc, err := OpenCheckpoint(later.Checkpoint, v)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("later %w", err)
	}
	small, big := cp, lc
	if lc.Size < cp.Size {
		small, big = lc, cp
	}
	if small.Size == big.Size {
		if !equalRoots(small.Root, big.Root) {
			return lc, fmt.Errorf("the checkpoints of size %d have different roots: the trail was rewritten", cp.Size)
		}
		return lc, nil
	}
	c := later.Consistency
	if c == nil || c.From != small.Size || c.To != big.Size {
		return lc, fmt.Errorf("a consistency proof from size %d to %d is needed: GET /audit/consistency?from=%d&to=%d, then -consistency FILE",
			small.Size, big.Size, small.Size, big.Size)
	}
	proof := make([][]byte, len(c.Proof))
	for i, p := range c.Proof {
		if proof[i], err = base64.StdEncoding.DecodeString(p); err != nil {
			return lc, errors.New("the consistency proof is not base64")
		}
	}
	if err := VerifyConsistency(small.Size, big.Size, proof, small.Root, big.Root); err != nil {
		return lc, fmt.Errorf("the checkpoint of size %d is not a prefix of the checkpoint of size %d: the trail was rewritten",
			small.Size, big.Size)
	}
	return lc, nil
}

// checkPeriod proves that an export that is not narrowed holds all of its
// period: each line was logged in it, and the leaves just outside it (the
// header's Before and After) are the neighbours of its first and last.
func checkPeriod(h Header, lines []Line, first, last int64, cp Checkpoint) error {
	in := func(at time.Time) bool { return !at.Before(h.Filter.From) && at.Before(h.Filter.To) }
	for i, ln := range lines {
		if at, ok := loggedAt(ln); ok && !in(at) {
			return fmt.Errorf("line %d (leaf %d): logged at %s, outside the export's period", i+2, ln.Leaf, at.Format(time.RFC3339))
		}
	}
	start, end := int64(0), int64(cp.Size)
	for _, b := range []struct {
		name string
		line *Line
	}{{"before", h.Before}, {"after", h.After}} {
		if b.line == nil {
			continue
		}
		at, ok := loggedAt(*b.line)
		if !ok || b.line.Leaf < 0 || uint64(b.line.Leaf) >= cp.Size || in(at) ||
			VerifyInclusion(uint64(b.line.Leaf), cp.Size, LeafHash([]byte(b.line.Entry)), decodeProof(b.line.Proof), cp.Root) != nil {
			return fmt.Errorf("the leaf %s the period (leaf %d) is not one logged outside it in the checkpoint", b.name, b.line.Leaf)
		}
		if b.name == "before" {
			start = b.line.Leaf + 1
		} else {
			end = b.line.Leaf
		}
	}
	next := start
	if first >= 0 {
		if first != start {
			return fmt.Errorf("the export starts at leaf %d, but the period starts at leaf %d: leaves %d to %d are missing", first, start, start, first-1)
		}
		next = last + 1
	}
	if next != end {
		return fmt.Errorf("the export ends before leaf %d, but the period ends before leaf %d: leaves %d to %d are missing", next, end, next, end-1)
	}
	return nil
}

// loggedAt reads when a line's entry was logged; false without an entry.
func loggedAt(ln Line) (time.Time, bool) {
	var e struct {
		LoggedAt time.Time `json:"logged_at"`
	}
	if ln.Entry == "" || ln.Unlogged || json.Unmarshal([]byte(ln.Entry), &e) != nil {
		return time.Time{}, false
	}
	return e.LoggedAt, true
}

// decodeProof reads base64 hashes; one that is not base64 is left empty
// (so the proof fails).
func decodeProof(p []string) [][]byte {
	out := make([][]byte, len(p))
	for i, s := range p {
		out[i], _ = base64.StdEncoding.DecodeString(s)
	}
	return out
}
