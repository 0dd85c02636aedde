package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/note"

	"countersign/store"
)

// ExportFormat names the export's format in its header line.
const ExportFormat = "countersign-audit-export/1"

// Filter is what an export holds: the leaves logged in [From, To) and,
// when set, only those of a system, an action, a person or a customer.
type Filter = store.TrailFilter

// Header is the export's first line: what it holds and the checkpoint its
// proofs are against.
type Header struct {
	Format     string `json:"format"`
	Filter     Filter `json:"filter"`
	Lines      int    `json:"lines"`
	Checkpoint string `json:"checkpoint"`
	// Before and After are, in an export that is not narrowed, the leaves
	// just outside the period (when the tree has them): they prove that
	// the lines are all the period has.
	Before *Line `json:"before,omitempty"`
	After  *Line `json:"after,omitempty"`
}

// Line is one leaf of the export: its index, its entry (the exact bytes
// hashed) and the inclusion proof of its hash in the checkpoint's tree.
// Missing marks a leaf whose event row is gone from the database; Unlogged
// an event row that has no leaf (Leaf is then -1).
type Line struct {
	Leaf     int64    `json:"leaf"`
	Entry    string   `json:"entry,omitempty"`
	Proof    []string `json:"proof,omitempty"`
	Kind     string   `json:"kind,omitempty"`
	Ref      string   `json:"ref,omitempty"`
	Missing  bool     `json:"missing,omitempty"`
	Unlogged bool     `json:"unlogged,omitempty"`
}

// Files are an export: the JSON Lines (header, then one line per leaf),
// the same as CSV for spreadsheets, and the detached signature of both.
type Files struct {
	JSONL, CSV, Sig []byte
}

// Export signs a checkpoint of the trail as it is now and writes the
// leaves f selects with their proofs against it. It fails with
// ErrRewritten when the stored leaves no longer hash to the signed roots.
func (l *Log) Export(ctx context.Context, f Filter) (Files, error) {
	cp, err := l.Sign(ctx)
	if err != nil {
		return Files{}, err
	}
	leafHashes, err := l.store.TrailLeafHashes(ctx, 0, cp.Size)
	if errors.Is(err, store.ErrNotFound) {
		return Files{}, fmt.Errorf("audit.Export: checkpoint of size %d: %w", cp.Size, ErrRewritten)
	}
	if err != nil {
		return Files{}, fmt.Errorf("audit.Export: %w", err)
	}
	tree := NewTree(leafHashes)
	if root, err := tree.Root(uint64(cp.Size)); err != nil || !equalRoots(root, cp.Root) {
		return Files{}, fmt.Errorf("audit.Export: checkpoint of size %d: %w", cp.Size, ErrRewritten)
	}
	leaves, err := l.store.TrailLeaves(ctx, f)
	if err != nil {
		return Files{}, fmt.Errorf("audit.Export: %w", err)
	}
	var lines []Line
	for _, lf := range leaves {
		if lf.Index >= cp.Size {
			continue // appended after the checkpoint: the next export's
		}
		ln, err := lineOf(lf, tree, cp.Size)
		if err != nil {
			return Files{}, err
		}
		lines = append(lines, ln)
	}
	h := Header{Format: ExportFormat, Filter: f, Lines: len(lines), Checkpoint: cp.Note}
	if !f.Narrowed() {
		before, after, err := l.store.TrailBounds(ctx, f.From, f.To, cp.Size)
		if err != nil {
			return Files{}, fmt.Errorf("audit.Export: %w", err)
		}
		for _, b := range []struct {
			leaf *store.TrailLeaf
			to   **Line
		}{{before, &h.Before}, {after, &h.After}} {
			if b.leaf != nil {
				ln, err := lineOf(*b.leaf, tree, cp.Size)
				if err != nil {
					return Files{}, err
				}
				*b.to = &ln
			}
		}
	}
	return writeExport(h, lines, l.keys.Signer)
}

// lineOf is a leaf as an export line, with its proof in the tree of size.
func lineOf(lf store.TrailLeaf, tree *Tree, size int64) (Line, error) {
	ln := Line{Leaf: lf.Index}
	switch {
	case lf.Index < 0:
		ln.Unlogged, ln.Kind, ln.Ref, ln.Entry = true, lf.Kind, lf.Ref, *lf.Entry
	case lf.Entry == nil:
		ln.Missing, ln.Kind, ln.Ref = true, lf.Kind, lf.Ref
	default:
		ln.Entry = *lf.Entry
		p, err := tree.Inclusion(uint64(lf.Index), uint64(size))
		if err != nil {
			return Line{}, err
		}
		for _, h := range p {
			ln.Proof = append(ln.Proof, base64.StdEncoding.EncodeToString(h))
		}
	}
	return ln, nil
}

func writeExport(h Header, lines []Line, signer note.Signer) (Files, error) {
	var jl bytes.Buffer
	enc := json.NewEncoder(&jl)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(h); err != nil {
		return Files{}, fmt.Errorf("audit: export header: %w", err)
	}
	for _, ln := range lines {
		if err := enc.Encode(ln); err != nil {
			return Files{}, fmt.Errorf("audit: export line: %w", err)
		}
	}
	c, err := csvOf(lines)
	if err != nil {
		return Files{}, err
	}
	sig, err := note.Sign(&note.Note{Text: sigText(jl.Bytes(), c)}, signer)
	if err != nil {
		return Files{}, fmt.Errorf("audit: sign export: %w", err)
	}
	return Files{JSONL: jl.Bytes(), CSV: c, Sig: sig}, nil
}

// sigText is what the detached signature signs: the SHA-256 of each file.
func sigText(jsonl, csv []byte) string {
	j, c := sha256.Sum256(jsonl), sha256.Sum256(csv)
	return "countersign audit export\njsonl sha256 " + hex.EncodeToString(j[:]) + "\ncsv sha256 " + hex.EncodeToString(c[:]) + "\n"
}

// csvColumns are the CSV's columns, read from each line's entry.
var csvColumns = []string{"leaf", "kind", "logged_at", "id", "at", "actor_kind", "actor_id", "action", "system", "state",
	"task_id", "invocation_id", "data", "problem"}

// csvOf writes the lines as CSV: the spreadsheet's view of the same
// entries, which `audit verify` derives again and compares.
func csvOf(lines []Line) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(csvColumns)
	for _, ln := range lines {
		var e map[string]json.RawMessage
		if ln.Entry != "" {
			if err := json.Unmarshal([]byte(ln.Entry), &e); err != nil {
				return nil, fmt.Errorf("audit: leaf %d: entry is not JSON: %w", ln.Leaf, err)
			}
		}
		row := make([]string, len(csvColumns))
		row[0] = fmt.Sprint(ln.Leaf)
		for i, col := range csvColumns[1 : len(csvColumns)-1] {
			row[i+1] = cell(e[col])
		}
		switch {
		case ln.Missing:
			row[1], row[3], row[len(row)-1] = ln.Kind, ln.Ref, "row deleted"
		case ln.Unlogged:
			row[len(row)-1] = "not in the trail"
		}
		_ = w.Write(row)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("audit: export csv: %w", err)
	}
	return b.Bytes(), nil
}

// cell is a JSON value as a spreadsheet cell: strings bare, null empty,
// anything else as its JSON text.
func cell(v json.RawMessage) string {
	if len(v) == 0 || string(v) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}
