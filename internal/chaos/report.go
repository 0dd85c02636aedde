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
			ts.Reconciled += s.Reconciled
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
	printSystems(out, res.Totals.Systems)
	fmt.Fprintf(out, "longest a dispatch was seen past its lease during the load: %s\n", time.Duration(res.Totals.LeaseOvershootMS)*time.Millisecond)
	fmt.Fprintf(out, "seed %d: %d rounds, %d violations\n", res.Seed, len(res.Rounds), res.Totals.Violations)
}

// printSystems prints, per system, what became of its unverified writes:
// settled by the consoles' sweep, by reconciling on request, or left for
// a person, with and without an effect in its ledger; then the writes
// left without an effect in the systems whose record proves a call not
// applied, which no person should have had to settle.
func printSystems(out io.Writer, systems map[string]*SystemCounts) {
	left, total := []string{}, 0
	for _, name := range slices.Sorted(maps.Keys(systems)) {
		s := systems[name]
		record := "its record proves nothing absent"
		if s.Authoritative {
			record = "its record proves a call not applied"
			left = append(left, fmt.Sprintf("%s %d", name, s.WithoutEffect))
			total += s.WithoutEffect
		}
		fmt.Fprintf(out, "system %s (%s): %d invocations, %d completed; of %d unverified writes %d settled by the sweep (%d as not applied), %d by reconciling on request, %d left for a person: %d with an effect, %d without\n",
			name, record, s.Invocations, s.Completed, s.Swept+s.Unverified, s.Swept, s.SweptNotApplied, s.Reconciled, s.Left(), s.WithEffect, s.WithoutEffect)
	}
	fmt.Fprintf(out, "left for a person without an effect in an authoritative record: %d (%s)\n", total, strings.Join(left, ", "))
}
