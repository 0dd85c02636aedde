// Package clocktest is a clock for tests that moves only when told to, so
// timeouts, windows and deadlines are tested without waiting.
package clocktest

import (
	"sync"
	"time"
)

// Clock is a fake time source, safe for concurrent use. Pass its Now
// method wherever the code takes a `now func() time.Time`.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New starts a clock at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
