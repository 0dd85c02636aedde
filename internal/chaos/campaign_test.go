package chaos

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// TestShortCampaign is the campaign CI runs: one round of about half a
// minute with two console processes, a fixed seed, and every fault the
// schedule draws for it. Any broken invariant fails it, with the round's
// history written to the test's temp dir.
func TestShortCampaign(t *testing.T) {
	t.Parallel()
	bin, err := BuildConsole(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	hist := t.TempDir()
	res, err := Run(context.Background(), Config{Seed: 16, Rounds: 1, Duration: 3 * time.Minute, RoundLength: 30 * time.Second,
		Instances: 2, Assistants: 2, Bin: bin, HistoryDir: hist, Out: &out})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 1 {
		t.Fatalf("ran %d rounds, want 1", len(res.Rounds))
	}
	r := res.Rounds[0]
	if r.Error != "" {
		t.Fatalf("round could not run: %s", r.Error)
	}
	for _, f := range r.Findings {
		t.Errorf("%s: task %s invocation %s: %s", f.Rule, f.Task, f.Invocation, f.Detail)
	}
	if len(res.Histories) > 0 {
		t.Logf("history: %s", res.Histories[0])
	}
	c := r.Counts
	if c.Proposed == 0 || c.Completed == 0 || c.Effects == 0 || c.AgentApproved == 0 || c.CustomerConfirmed == 0 || sum(c.Faults) == 0 {
		t.Errorf("the round exercised too little to prove anything: %+v", c)
	}
}
