package racetest_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"countersign/internal/racetest"
)

// TestRunReturnsEachCallsErrorAtItsIndex runs calls that each wait until
// all of them have begun, so Run gets past them only by running them at
// once, and wants each call's error (nil for the even ones) back at its
// own index.
func TestRunReturnsEachCallsErrorAtItsIndex(t *testing.T) {
	const n = 8
	want := make([]error, n)
	for i := 1; i < n; i += 2 {
		want[i] = fmt.Errorf("call %d", i)
	}
	var begun sync.WaitGroup
	begun.Add(n)
	got := racetest.Run(n, func(i int) error {
		begun.Done()
		begun.Wait()
		return want[i]
	})
	if len(got) != n {
		t.Fatalf("%d errors, want %d", len(got), n)
	}
	for i, err := range got {
		if !errors.Is(err, want[i]) {
			t.Errorf("call %d returned %v, want %v", i, err, want[i])
		}
	}
}
