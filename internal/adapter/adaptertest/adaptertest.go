// Package adaptertest runs the adapter conformance suite
// (internal/adapter/conformance) from a Go test, in the spirit of the
// database/sql driver tests. An adapter author calls Run with a Setup that
// starts a fresh backend and connects their adapter to it, and a Fixture
// naming the objects and principals to use:
//
//	func TestConformance(t *testing.T) {
//		adaptertest.Run(t, setup, adaptertest.Fixture{…})
//	}
//
// Each check is a subtest with a backend of its own, run in parallel. The
// same checks run against a live system with `countersign conformance`.
package adaptertest

import (
	"net/http"
	"sync/atomic"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/adapter/conformance"
)

// The suite's types, named here for the tests that use them.
type (
	Fault     = conformance.Fault
	Fixture   = conformance.Fixture
	Reference = conformance.Reference
	Call      = conformance.Call
	Answer    = conformance.Answer
	Read      = conformance.Read
	Varied    = conformance.Varied
)

// The faults a Backend must be able to inject.
const (
	FaultServerError     = conformance.FaultServerError
	FaultReset           = conformance.FaultReset
	FaultDropAfterCommit = conformance.FaultDropAfterCommit
)

// DefaultForbidden are the internal fields of a typical business system.
var DefaultForbidden = conformance.DefaultForbidden

// CountingTransport is an http.RoundTripper that counts the requests an
// adapter sends through it before passing each to http.DefaultTransport,
// so a test can say that a refused call reached the system with none, as
// the adapters' tests of conformance.PathValues do. Its zero value is
// ready to use and it is safe for concurrent use; RoundTrip fails only as
// http.DefaultTransport does.
type CountingTransport struct{ n atomic.Int64 }

// RoundTrip counts r and sends it with http.DefaultTransport.
func (c *CountingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// Requests is how many requests have gone through c so far.
func (c *CountingTransport) Requests() int64 { return c.n.Load() }

// Backend is one fresh instance of the system under test with the adapter
// connected to it.
type Backend struct {
	// System is the adapter under test. Its HTTP requests must go through
	// the transport Setup was given, and it must use a request ledger.
	System adapter.System
	// Effects counts the effects the backend itself recorded under key, or
	// in total when key is "". It must not go through System.
	Effects func(t *testing.T, key string) int
	// Fault makes the backend fail the next request of Fixture.Write's
	// action as f.
	Fault func(t *testing.T, f Fault)
}

// Setup starts a fresh backend for one check and connects the adapter to
// it, sending its HTTP through transport.
type Setup func(t *testing.T, transport http.RoundTripper) Backend

// Run runs every check against a fresh backend from setup, each as a
// subtest named for what it checks, in parallel.
func Run(t *testing.T, setup Setup, fix Fixture) {
	t.Helper()
	for _, c := range conformance.Checks() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			e := conformance.Start(t, func(_ conformance.T, tr http.RoundTripper) conformance.Backend {
				b := setup(t, tr)
				return conformance.Backend{System: b.System,
					Effects: func(_ conformance.T, key string) int { return b.Effects(t, key) },
					Fault:   func(_ conformance.T, f Fault) { b.Fault(t, f) }}
			}, fix)
			e.Run(t, c, "conformance")
		})
	}
}
