package adapter_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
)

// named is a system known only by its name and its actions' names: all the
// registry's catalogue reads.
type named struct {
	adapter.System
	name    string
	actions []string
	reads   []string
}

func (s named) Name() string { return s.name }

func (s named) ReadTools() []adapter.ReadToolSpec {
	out := make([]adapter.ReadToolSpec, len(s.reads))
	for i, r := range s.reads {
		out[i] = adapter.ReadToolSpec{Name: r}
	}
	return out
}

func (s named) Actions() []adapter.ActionSpec {
	out := make([]adapter.ActionSpec, len(s.actions))
	for i, a := range s.actions {
		out[i] = adapter.ActionSpec{Name: a}
	}
	return out
}

func TestOffering(t *testing.T) {
	// Connected out of alphabetical order: Offering sorts.
	reg := adapter.NewRegistry(
		named{name: "shop", actions: []string{"issue_refund", "cancel_order"}},
		named{name: "billing", actions: []string{"issue_refund"}},
		named{name: "warehouse", actions: []string{"hold_parcel"}},
	)
	for _, tc := range []struct {
		action string
		want   []string
	}{
		{"issue_refund", []string{"billing", "shop"}},
		{"cancel_order", []string{"shop"}},
		{"hold_parcel", []string{"warehouse"}},
		{"delete_everything", nil},
		{"", nil},
		{"shop/cancel_order", nil}, // a qualified name is not an action's name
	} {
		if got := reg.Offering(tc.action); !cmp.Equal(got, tc.want) {
			t.Errorf("Offering(%q) = %v, want %v", tc.action, got, tc.want)
		}
	}
	reg.Disconnect("billing")
	if got, want := reg.Offering("issue_refund"), []string{"shop"}; !cmp.Equal(got, want) {
		t.Errorf("after disconnecting billing, Offering(issue_refund) = %v, want %v", got, want)
	}
}

// TestOffersActionAndReadTool: a name, bare or qualified by its system,
// is a write action or a read tool of a connected system, or neither.
func TestOffersActionAndReadTool(t *testing.T) {
	reg := adapter.NewRegistry(
		named{name: "shop", actions: []string{"issue_refund"}, reads: []string{"get_order"}},
		named{name: "billing", actions: []string{"void_invoice"}},
	)
	for _, tc := range []struct {
		name         string
		action, read bool
	}{
		{"issue_refund", true, false},
		{"shop/issue_refund", true, false},
		{"billing/issue_refund", false, false},
		{"get_order", false, true},
		{"shop/get_order", false, true},
		{"billing/get_order", false, false},
		{"void_invoice", true, false},
		{"delete_everything", false, false},
		{"shop/", false, false},
	} {
		if got := reg.OffersAction(tc.name); got != tc.action {
			t.Errorf("OffersAction(%q) = %t, want %t", tc.name, got, tc.action)
		}
		if got := reg.OffersReadTool(tc.name); got != tc.read {
			t.Errorf("OffersReadTool(%q) = %t, want %t", tc.name, got, tc.read)
		}
	}
}

func TestParseActionName(t *testing.T) {
	for _, tc := range []struct {
		name, system, action string
		qualified            bool
	}{
		{"shop/issue_refund", "shop", "issue_refund", true},
		{"issue_refund", "", "issue_refund", false},
		{"", "", "", false},
		// Malformed names parse to parts no system offers.
		{"shop/", "shop", "", true},
		{"/issue_refund", "", "issue_refund", true},
		{"shop/a/b", "shop", "a/b", true},
	} {
		system, action, qualified := adapter.ParseActionName(tc.name)
		if system != tc.system || action != tc.action || qualified != tc.qualified {
			t.Errorf("ParseActionName(%q) = %q, %q, %v; want %q, %q, %v",
				tc.name, system, action, qualified, tc.system, tc.action, tc.qualified)
		}
	}
}
