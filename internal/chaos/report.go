package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

func writeHistory(dir string, rr RoundResult) (string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("chaos-history-%d-round%d.json", rr.Seed, rr.Round))
	b, err := json.MarshalIndent(rr, "", "  ")
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, b, 0o644)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func totals(rounds []RoundResult) Counts {
	t := Counts{Faults: map[string]int{}}
	for _, r := range rounds {
		c := r.Counts
		t.Proposed += c.Proposed
		t.Approved += c.Approved
		t.Completed += c.Completed
		t.Unverified += c.Unverified
		t.Reconciled += c.Reconciled
		t.Swept += c.Swept
		t.Effects += c.Effects
		t.AgentApproved += c.AgentApproved
		t.CustomerConfirmed += c.CustomerConfirmed
		t.Violations += c.Violations
		t.StillUnverified += c.StillUnverified
		t.WithEffect += c.WithEffect
		t.LeaseOvershootMS = max(t.LeaseOvershootMS, c.LeaseOvershootMS)
		for k, v := range c.Faults {
			t.Faults[k] += v
		}
		for name, s := range c.Systems {
			ts := t.system(name)
			ts.Invocations += s.Invocations
			ts.Completed += s.Completed
			ts.Swept += s.Swept
			ts.SweptNotApplied += s.SweptNotApplied
			ts.Unverified += s.Unverified
			ts.WithEffect += s.WithEffect
			ts.WithoutEffect += s.WithoutEffect
		}
	}
	return t
}

func printTable(out io.Writer, res Result) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\tproposed\tapproved\tcompleted\tswept\tunverified\treconciled\tstill unverified\t(with effect)\teffects\tfaults\tviolations\t")
	row := func(name string, c Counts) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", name, c.Proposed, c.Approved, c.Completed,
			c.Swept, c.Unverified, c.Reconciled, c.StillUnverified, c.WithEffect, c.Effects, sum(c.Faults), c.Violations)
	}
	for _, r := range res.Rounds {
		name := fmt.Sprint(r.Round)
		if r.Error != "" {
			name += " (error)"
		}
		row(name, r.Counts)
	}
	row("total", res.Totals)
	tw.Flush()
	var parts []string
	for _, k := range FaultKinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, res.Totals.Faults[k]))
	}
	fmt.Fprintf(out, "faults injected: %s\n", strings.Join(parts, ", "))
	for _, name := range slices.Sorted(maps.Keys(res.Totals.Systems)) {
		s := res.Totals.Systems[name]
		fmt.Fprintf(out, "system %s: %d invocations, %d completed, %d swept (%d as not applied), %d unverified, still unverified %d with effect and %d without\n",
			name, s.Invocations, s.Completed, s.Swept, s.SweptNotApplied, s.Unverified, s.WithEffect, s.WithoutEffect)
	}
	fmt.Fprintf(out, "longest a dispatch was seen past its lease during the load: %s\n", time.Duration(res.Totals.LeaseOvershootMS)*time.Millisecond)
	fmt.Fprintf(out, "seed %d: %d rounds, %d violations\n", res.Seed, len(res.Rounds), res.Totals.Violations)
}
