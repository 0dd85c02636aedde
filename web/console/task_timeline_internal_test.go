package console

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"countersign/internal/controlplane"
)

// recordedKinds lists every kind of task event the control plane records,
// read from its source: the literal kinds, and "invocation."/"task." with
// each state.
func recordedKinds(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../internal/controlplane/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no control plane source: %v", err)
	}
	literal := regexp.MustCompile(`"((?:invocation|task|proposal|target|permit|dispatch|handoff)\.[a-z_]+)"`)
	kinds := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			kinds[m[1]] = true
		}
		if strings.Contains(string(src), `"invocation."+string(`) {
			for _, st := range controlplane.States {
				kinds["invocation."+string(st)] = true
			}
		}
		if strings.Contains(string(src), `"task."+string(`) {
			for _, st := range []controlplane.TaskState{controlplane.TaskActive, controlplane.TaskPaused, controlplane.TaskCancelled, controlplane.TaskClosed} {
				kinds["task."+string(st)] = true
			}
		}
	}
	// A state no event moves an invocation into by name.
	delete(kinds, "invocation.dispatching")
	out := make([]string, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	return out
}

// TestEveryRecordedEventHasASentenceFromItsOwnData checks each kind of
// event the control plane records has its own sentence (not the fallback
// that only repeats the kind's name), and that the sentence is made from
// the event alone: eventSentence is given nothing but the event and the
// name earlier events gave its request, so an invocation's current quote
// cannot reach it.
func TestEveryRecordedEventHasASentenceFromItsOwnData(t *testing.T) {
	kinds := recordedKinds(t)
	if len(kinds) < 20 {
		t.Fatalf("found only %d kinds of event: %v", len(kinds), kinds)
	}
	for _, k := range kinds {
		e := controlplane.Event{Action: k, InvocationID: "inv_1", Data: map[string]any{}}
		got := eventSentence(e, "Refund $12.50")
		if got == humanize(k)+" “Refund $12.50”." || got == "" {
			t.Errorf("%s has no sentence of its own: %q", k, got)
		}
	}
}

// TestRefusalSaysBlockedOnlyWhenTheEventRecordedABlock covers old events
// too: one without the block flag does not claim a block.
func TestRefusalSaysBlockedOnlyWhenTheEventRecordedABlock(t *testing.T) {
	base := map[string]any{"system": "shop", "action": "issue_refund", "target_id": "ord_1", "actor_name": "demo-assistant"}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name    string
		data    map[string]any
		blocked bool
	}{
		{"refusal with a block", with(map[string]any{"blocked": true, "policy": true, "message": "Outside the refund window."}), true},
		{"refusal without a block", with(map[string]any{"blocked": false, "message": "Too much."}), false},
		{"an old refusal that recorded no block flag", with(map[string]any{"policy": true}), false},
	}
	for _, tc := range cases {
		e := controlplane.Event{Action: "proposal.refused", ActorKind: controlplane.ActorAssistant, Data: tc.data}
		got := eventSentence(e, "")
		if strings.Contains(got, "blocked") != tc.blocked {
			t.Errorf("%s: %q", tc.name, got)
		}
		if !strings.HasPrefix(got, "The shop refused a proposal by demo-assistant (assistant)") {
			t.Errorf("%s: the refusal is not the shop's: %q", tc.name, got)
		}
		if row := timelineRow(e, nil, ""); row.Actor != "" {
			t.Errorf("%s: the row names %q as the one who refused", tc.name, row.Actor)
		}
	}
}
