package shopadapter_test

import (
	"testing"

	"countersign/internal/shopadapter"
)

// TestEveryActionSaysWhatItIs: what the console knows of a shop action
// beyond its arguments lives on its spec, so an action added without its
// first stage, its word for done or its reject reasons fails here rather
// than falling back, unnoticed, to the generic ones.
func TestEveryActionSaysWhatItIs(t *testing.T) {
	t.Parallel()
	actions := shopadapter.New(shopadapter.Config{}).Actions()
	if len(actions) == 0 {
		t.Fatal("the shop has no actions")
	}
	for _, a := range actions {
		if a.DefaultStage < 3 || a.DefaultStage > 5 {
			t.Errorf("%s: default stage %d, want 3, 4 or 5", a.Name, a.DefaultStage)
		}
		if a.DoneWords == "" {
			t.Errorf("%s: no words for done", a.Name)
		}
		if len(a.RejectReasons) == 0 {
			t.Errorf("%s: no reject reasons", a.Name)
		}
		for _, r := range a.RejectReasons {
			if r == "" || r[len(r)-1] != '.' {
				t.Errorf("%s: reject reason %q is not a sentence", a.Name, r)
			}
		}
	}
}
