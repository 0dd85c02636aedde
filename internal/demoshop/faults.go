package demoshop

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"
)

// FaultRule is the misbehaviour injected into one route, as POST /_faults
// takes it and GET /_faults lists it.
type FaultRule struct {
	// Route is a route pattern exactly as the shop registers it, e.g.
	// "POST /refunds" or "PATCH /subscriptions/{id}", or "*" for every
	// business route without a rule of its own.
	Route string `json:"route"`
	// LatencyMS is added before every call is handled.
	LatencyMS int `json:"latency_ms"`
	// ErrorRate is the probability (0..1) that a call is answered 500 without
	// being applied.
	ErrorRate float64 `json:"error_rate"`
	// ResetRate is the probability (0..1) that the connection is reset
	// without an answer and without the call being applied.
	ResetRate float64 `json:"reset_rate"`
	// DropAfterCommit is how many of the next calls are applied and committed
	// and then get no answer at all: the connection is closed.
	DropAfterCommit int `json:"drop_after_commit"`
	// IgnoreWrites is how many of the next calls are answered as if they had
	// succeeded while their change is rolled back.
	IgnoreWrites int `json:"ignore_writes"`
}

// validate checks a rule against the shop's route patterns.
func (f FaultRule) validate(known map[string]bool) error {
	switch {
	case f.Route == "":
		return errMissing("route")
	case f.Route != "*" && !known[f.Route]:
		return errParam("route", "parameter_invalid", "Unknown route %q: use a pattern such as \"POST /refunds\" or \"*\".", f.Route)
	case f.LatencyMS < 0 || f.LatencyMS > 60_000:
		return errParam("latency_ms", "parameter_invalid_integer", "latency_ms must be between 0 and 60000.")
	case f.ErrorRate < 0 || f.ErrorRate > 1:
		return errParam("error_rate", "parameter_invalid", "error_rate must be between 0 and 1.")
	case f.ResetRate < 0 || f.ResetRate > 1:
		return errParam("reset_rate", "parameter_invalid", "reset_rate must be between 0 and 1.")
	case f.DropAfterCommit < 0:
		return errParam("drop_after_commit", "parameter_invalid_integer", "drop_after_commit must not be negative.")
	case f.IgnoreWrites < 0:
		return errParam("ignore_writes", "parameter_invalid_integer", "ignore_writes must not be negative.")
	}
	return nil
}

// faultTable is the shop's in-memory fault state.
type faultTable struct {
	mu    sync.Mutex
	rules map[string]*FaultRule
	rand  *rand.Rand
	known map[string]bool
}

func newFaultTable(rnd *rand.Rand, routes []route) *faultTable {
	known := make(map[string]bool, len(routes))
	for _, rt := range routes {
		known[rt.pattern] = true
	}
	return &faultTable{rules: map[string]*FaultRule{}, rand: rnd, known: known}
}

// faultPlan is what happens to one call, decided up front under the lock.
type faultPlan struct {
	latency time.Duration
	reset   bool
	fail    bool
	drop    bool
	ignore  bool
}

func (p faultPlan) String() string {
	var s string
	if p.latency > 0 {
		s = fmt.Sprintf("latency=%s ", p.latency)
	}
	switch {
	case p.reset:
		s += "reset"
	case p.fail:
		s += "error"
	case p.drop && p.ignore:
		s += "drop_after_commit+ignore_writes"
	case p.drop:
		s += "drop_after_commit"
	case p.ignore:
		s += "ignore_writes"
	}
	return s
}

// plan draws the faults for one call of pattern and spends the counters it uses.
func (t *faultTable) plan(pattern string) faultPlan {
	t.mu.Lock()
	defer t.mu.Unlock()
	rule := t.rules[pattern]
	if rule == nil {
		rule = t.rules["*"]
	}
	if rule == nil {
		return faultPlan{}
	}
	p := faultPlan{latency: time.Duration(rule.LatencyMS) * time.Millisecond}
	if rule.ResetRate > 0 && t.rand.Float64() < rule.ResetRate {
		p.reset = true
		return p
	}
	if rule.ErrorRate > 0 && t.rand.Float64() < rule.ErrorRate {
		p.fail = true
		return p
	}
	if rule.DropAfterCommit > 0 {
		rule.DropAfterCommit--
		p.drop = true
	}
	if rule.IgnoreWrites > 0 {
		rule.IgnoreWrites--
		p.ignore = true
	}
	return p
}

// SetFault installs rule, replacing any rule for the same route. It fails
// with the same validation errors as POST /_faults.
func (s *Shop) SetFault(rule FaultRule) error {
	if err := rule.validate(s.faults.known); err != nil {
		return err
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.rules[rule.Route] = &rule
	return nil
}

// ClearFaults removes every fault rule.
func (s *Shop) ClearFaults() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	clear(s.faults.rules)
}

// Faults lists the fault rules in force, with what is left of their
// counters, sorted by route.
func (s *Shop) Faults() []FaultRule {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	out := make([]FaultRule, 0, len(s.faults.rules))
	for _, r := range s.faults.rules {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Route < out[j].Route })
	return out
}

// serveWithFaults runs one business call under its fault plan and says which
// fault, if any, it applied.
func (s *Shop) serveWithFaults(w http.ResponseWriter, r *http.Request, rt route) string {
	p := s.faults.plan(rt.pattern)
	if p.latency > 0 {
		timer := time.NewTimer(p.latency)
		select {
		case <-timer.C:
		case <-r.Context().Done():
			timer.Stop()
			return p.String() + " (client left)"
		}
	}
	switch {
	case p.reset:
		s.closeConnection(w, r, true)
		return p.String()
	case p.fail:
		s.writeError(w, r, errInjected)
		return p.String()
	}
	if p.ignore {
		r = r.WithContext(withIgnoreWrites(r.Context()))
	}
	if !p.drop {
		s.run(w, r, rt.handle)
		return p.String()
	}
	// The write commits inside the handler; its answer goes nowhere.
	s.run(&discardWriter{header: http.Header{}}, r, rt.handle)
	s.closeConnection(w, r, false)
	return p.String()
}

// closeConnection ends the call without a single byte of answer. With reset
// the socket is closed with SO_LINGER 0, so the client sees "connection reset
// by peer" rather than an orderly end of stream.
func (s *Shop) closeConnection(w http.ResponseWriter, r *http.Request, reset bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		if !errors.Is(err, http.ErrNotSupported) {
			s.log.WarnContext(r.Context(), "demoshop: hijack failed", "error", err.Error())
		}
		// HTTP/2 and test recorders cannot be hijacked; aborting the handler
		// is the nearest thing.
		panic(http.ErrAbortHandler)
	}
	if tcp, ok := conn.(*net.TCPConn); ok && reset {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// discardWriter takes the answer of a call whose response is dropped.
type discardWriter struct {
	header http.Header
	body   bytes.Buffer
}

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(b []byte) (int, error) { return d.body.Write(b) }
func (d *discardWriter) WriteHeader(int)             {}

// handleFaultList serves GET /_faults: the rules in force.
func (s *Shop) handleFaultList(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, List[FaultRule]{Data: s.Faults()})
	return nil
}

// handleFaultSet serves POST /_faults: install or replace the rule of one route.
func (s *Shop) handleFaultSet(w http.ResponseWriter, r *http.Request) error {
	var rule FaultRule
	if err := decodeBody(r, &rule, false); err != nil {
		return err
	}
	if err := s.SetFault(rule); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rule)
	return nil
}

// handleFaultClear serves DELETE /_faults: remove every rule, or only the rule
// of ?route= when given.
func (s *Shop) handleFaultClear(w http.ResponseWriter, r *http.Request) error {
	if route := r.URL.Query().Get("route"); route != "" {
		s.faults.mu.Lock()
		delete(s.faults.rules, route)
		s.faults.mu.Unlock()
	} else {
		s.ClearFaults()
	}
	writeJSON(w, http.StatusOK, List[FaultRule]{Data: s.Faults()})
	return nil
}
