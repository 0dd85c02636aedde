package api

import (
	"testing"

	"countersign/internal/assistants"
)

// TestMCPToolNamesAreUniqueAcrossSystems: MCP has one namespace of tools, so
// two systems offering list_orders and issue_refund must not share a name (a
// second registration would replace the first and leave one system out of
// reach); a name only one system offers stays as it is.
func TestMCPToolNamesAreUniqueAcrossSystems(t *testing.T) {
	tools := []assistants.Tool{
		{System: "shop", Name: "list_orders", Kind: assistants.KindRead},
		{System: "shop-eu", Name: "list_orders", Kind: assistants.KindRead},
		{System: "shop", Name: "issue_refund", Kind: assistants.KindWrite},
		{System: "shop-eu", Name: "issue_refund", Kind: assistants.KindWrite},
		{System: "shop", Name: "get_customer", Kind: assistants.KindRead},
	}
	names := mcpToolNames(tools)
	want := []string{"shop__list_orders", "shop-eu__list_orders", "shop__issue_refund", "shop-eu__issue_refund", "get_customer"}
	seen := map[string]bool{}
	for i, n := range names {
		if n != want[i] {
			t.Errorf("tool %d (%s of %s) is named %q, want %q", i, tools[i].Name, tools[i].System, n, want[i])
		}
		reg := n
		if tools[i].Kind == assistants.KindWrite {
			reg = "propose_" + n
		}
		if seen[reg] {
			t.Errorf("two tools registered as %q", reg)
		}
		seen[reg] = true
	}
}
