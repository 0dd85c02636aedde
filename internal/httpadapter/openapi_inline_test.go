package httpadapter

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestInlineStopsAtARepeatedRef: a schema that contains itself is expanded
// once, its own reference inside it left empty; a document whose schemas
// all refer to each other is expanded within a bound, not exponentially.
func TestInlineStopsAtARepeatedRef(t *testing.T) {
	self := map[string]any{"components": map[string]any{"schemas": map[string]any{
		"Node": map[string]any{"type": "object", "properties": map[string]any{"child": map[string]any{"$ref": "#/components/schemas/Node"}}}}}}
	out := inline(map[string]any{"$ref": "#/components/schemas/Node"}, self, 0).(map[string]any)
	child := out["properties"].(map[string]any)["child"].(map[string]any)
	if len(child) != 0 {
		t.Errorf("Node's child = %v, want the repeat left empty", child)
	}

	schemas := map[string]any{}
	for i := range 12 {
		props := map[string]any{}
		for j := range 12 {
			props[fmt.Sprintf("p%d", j)] = map[string]any{"$ref": fmt.Sprintf("#/components/schemas/S%d", j)}
		}
		schemas[fmt.Sprintf("S%d", i)] = map[string]any{"type": "object", "properties": props}
	}
	wide := map[string]any{"components": map[string]any{"schemas": schemas}}
	done := make(chan int)
	go func() {
		b, _ := json.Marshal(inline(map[string]any{"$ref": "#/components/schemas/S0"}, wide, 0))
		done <- len(b)
	}()
	select {
	case n := <-done:
		if n > 4<<20 {
			t.Errorf("the wide document inlined to %d bytes", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("inlining a wide cross-referencing document did not end in 10 s")
	}
}
