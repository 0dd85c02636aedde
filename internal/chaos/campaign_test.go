package chaos

import (
	"bytes"
	"context"
	"strings"
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
	// The wide workload ran too: outcome webhooks, and writes to the
	// system described by a file.
	if c.HookEvents == 0 || c.DescribedFx == 0 {
		t.Errorf("the round's wide workload did not run: %+v", c)
	}
}

// TestShortFailoverCampaign is one round with a synchronous standby: the
// primary is killed and the standby promoted (then a new standby built)
// while two consoles dispatch, among console kills and lost answers. No
// acknowledged proposal, decision or journal row may be lost, and nothing
// may be sent twice.
func TestShortFailoverCampaign(t *testing.T) {
	t.Parallel()
	bin, err := BuildConsole(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Seed: 23, Rounds: 1, Duration: 4 * time.Minute, RoundLength: 40 * time.Second,
		Instances: 2, Assistants: 2, Bin: bin, HistoryDir: t.TempDir(), Out: &out, Replication: ReplicationSync,
		Faults: []string{FaultPGFailover, FaultConsoleKill, FaultShopDrop}})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 1 || res.Rounds[0].Error != "" {
		t.Fatalf("the round did not run: %+v", res.Rounds)
	}
	r := res.Rounds[0]
	for _, f := range r.Findings {
		t.Errorf("%s: task %s invocation %s: %s", f.Rule, f.Task, f.Invocation, f.Detail)
	}
	if r.Counts.Faults[FaultPGFailover] == 0 {
		t.Errorf("no failover ran: %v (schedule %+v)", r.Counts.Faults, r.Faults)
	}
	if r.Counts.Completed == 0 || r.Counts.Proposed == 0 {
		t.Errorf("the round exercised too little: %+v", r.Counts)
	}
}

// TestAsyncFailoverCampaignFindsLostCommits is the other side, and proves
// the checker sees it: with asynchronous replication (the standby's stream
// a second behind) the same round's failovers lose commits the consoles
// had acknowledged, and the checker reports them.
func TestAsyncFailoverCampaignFindsLostCommits(t *testing.T) {
	t.Parallel()
	bin, err := BuildConsole(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Seed: 23, Rounds: 1, Duration: 4 * time.Minute, RoundLength: 40 * time.Second,
		Instances: 2, Assistants: 2, Bin: bin, HistoryDir: t.TempDir(), Out: &out, Replication: ReplicationAsync,
		Faults: []string{FaultPGFailover, FaultConsoleKill, FaultShopDrop}})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 1 || res.Rounds[0].Error != "" {
		t.Fatalf("the round did not run: %+v", res.Rounds)
	}
	r := res.Rounds[0]
	if r.Counts.Faults[FaultPGFailover] == 0 {
		t.Fatalf("no failover ran: %v", r.Counts.Faults)
	}
	lost := 0
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Rule, "acknowledged_") || f.Rule == "effect_without_journal" || f.Rule == "effect_without_send" {
			lost++
		}
	}
	if lost == 0 {
		t.Errorf("asynchronous failovers lost nothing the checker saw: findings %+v", r.Findings)
	}
	t.Logf("asynchronous replication: %d findings of lost work after %d failovers", lost, r.Counts.Faults[FaultPGFailover])
}

// TestShortCampaignBehindPgBouncer is a round with the consoles behind
// PgBouncer in transaction pooling mode, while PostgreSQL restarts and
// crashes under it and consoles are killed: the invariants hold as they do
// on direct connections.
func TestShortCampaignBehindPgBouncer(t *testing.T) {
	t.Parallel()
	bin, err := BuildConsole(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Seed: 31, Rounds: 1, Duration: 4 * time.Minute, RoundLength: 40 * time.Second,
		Instances: 2, Assistants: 2, Bin: bin, HistoryDir: t.TempDir(), Out: &out, Pooler: true,
		Faults: []string{FaultPGRestart, FaultPGCrash, FaultConsoleKill, FaultShopDrop, FaultTaskPause}})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 1 || res.Rounds[0].Error != "" {
		t.Fatalf("the round did not run: %+v", res.Rounds)
	}
	r := res.Rounds[0]
	for _, f := range r.Findings {
		t.Errorf("%s: task %s invocation %s: %s", f.Rule, f.Task, f.Invocation, f.Detail)
	}
	if r.Counts.Faults[FaultPGRestart]+r.Counts.Faults[FaultPGCrash] == 0 || r.Counts.Completed == 0 {
		t.Errorf("the round exercised too little: %+v", r.Counts)
	}
}

// TestShortCampaignWithGraphQLSecondSystem is a round whose second system
// is the GraphQL shop, described by graphql-shop.json: its refunds go
// through a real GraphQL server under the shop faults (lost answers,
// errors after applying, resets, 503s), each key refunds at most once,
// and its unverified writes are settled by the consoles' own
// reconciliation where its authoritative record tells.
func TestShortCampaignWithGraphQLSecondSystem(t *testing.T) {
	t.Parallel()
	bin, err := BuildConsole(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Seed: 38, Rounds: 1, Duration: 3 * time.Minute, RoundLength: 25 * time.Second,
		Instances: 2, Assistants: 2, Bin: bin, HistoryDir: t.TempDir(), Out: &out, SecondSystem: SecondGraphQL,
		Faults: []string{FaultShopDrop, FaultShopIgnore, FaultShopReset, FaultShop5xx, FaultConsoleKill}})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 1 || res.Rounds[0].Error != "" {
		t.Fatalf("the round did not run: %+v", res.Rounds)
	}
	r := res.Rounds[0]
	for _, f := range r.Findings {
		t.Errorf("%s: task %s invocation %s: %s", f.Rule, f.Task, f.Invocation, f.Detail)
	}
	gql := r.Counts.Systems[systemGraphQL]
	if gql == nil || gql.Completed == 0 || r.Counts.DescribedFx == 0 {
		t.Errorf("no write to the GraphQL shop completed: %+v", gql)
	}
	if sum(r.Counts.Faults) == 0 {
		t.Errorf("no fault ran: %+v", r.Faults)
	}
}
