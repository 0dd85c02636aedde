// Package racetest starts a test's concurrent calls together, so a race
// the test claims to survive is run rather than assumed.
package racetest

import "sync"

// Run calls do(i) for every i in [0, n), each in its own goroutine, and
// returns their errors by i once all have returned. The goroutines wait
// on one channel that is closed only after all of them are started, so
// the calls begin as close together as the scheduler allows instead of in
// the order they were started. Run fails only as do does; a do that never
// returns keeps Run from returning too.
func Run(n int, do func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = do(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}
