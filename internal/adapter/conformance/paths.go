package conformance

import (
	"net/url"
	"slices"
	"strings"

	"countersign/internal/adapter"
)

// PathValues are argument values that would move a URL path if placed in
// it as one segment: dot segments, a slash and a backslash, as they are
// and percent-encoded (which a server or a proxy in front of it may
// decode), alone and after an id that looks valid ("ord_1%2F.."). The
// suite gives them to every string argument, and the adapters' own tests
// give them to the arguments they place in paths, so both test the same
// values; an adapter must refuse each one in a path segment. Callers read
// it and never change it.
var PathValues = []string{"..", ".", "a/b", `a\b`, "%2e%2e", "%2E.", "..%2F..", "a%2fb", "ord_1%2F.."}

// checkPathArgumentsStayInPlace: every string argument of every write
// action (the fixture's call of it, dry-run) and of every read tool is
// given each PathValues value in turn; no request may reach the system
// with a path that has a dot segment or a slash inside a segment, as sent
// or percent-decoded. An argument that goes into a path (its value in the
// fixture's call is a segment of a path the call reads, or the spec marks
// it adapter.Param.PathSegment) must be refused as invalid_arguments
// naming it, before anything is read.
func checkPathArgumentsStayInPlace(t T, e *Env) {
	before := e.Effects(t, "")
	try := func(what string, l leaf, inPath bool, call func(v string) error) {
		for _, v := range PathValues {
			e.tr.record()
			err := call(v)
			sent := e.tr.recorded()
			for _, s := range sent {
				if adapter.PathMoves(pathOf(s)) {
					t.Errorf("%s: args.%s = %q reached the system as %s, a path that leaves its place", what, l.path, v, s)
				}
			}
			if !inPath && !l.param.PathSegment {
				continue
			}
			if ae, ok := adapter.AsError(err); !ok || ae.Code != adapter.CodeInvalidArguments || ae.Fields[l.path] == "" {
				t.Errorf("%s: args.%s = %q goes into a path but was not refused naming it: %v", what, l.path, v, err)
			} else if len(sent) > 0 {
				t.Errorf("%s: args.%s = %q was refused only after %v; refuse it before reading anything", what, l.path, v, sent)
			}
		}
	}
	for _, a := range e.System.Actions() {
		v, ok := variedFor(e.fix, a.Name)
		if !ok {
			t.Errorf("action %s: the fixture has no valid call of it (add one to Fixture.Every)", a.Name)
			continue
		}
		p := principal(e.fix, v.Call)
		base := toMap(t, v.Args)
		e.tr.record()
		_, _ = e.System.DryRun(ctx(t), p, a.Name, raw(t, base))
		paths := e.tr.recorded()
		for _, l := range stringLeaves(a.Params) {
			try("action "+a.Name, l, inPaths(get(base, l.path), paths), func(s string) error {
				_, err := e.System.DryRun(ctx(t), p, a.Name, raw(t, with(base, l.path, s)))
				return err
			})
		}
	}
	for _, r := range e.System.ReadTools() {
		base := map[string]any{}
		if i := slices.IndexFunc(e.fix.Reads, func(fr Read) bool { return fr.Tool == r.Name }); i >= 0 {
			base = toMap(t, e.fix.Reads[i].Args)
		}
		e.tr.record()
		_, _ = e.System.Read(ctx(t), e.fix.Principal, r.Name, raw(t, base))
		paths := e.tr.recorded()
		for _, l := range stringLeaves(r.Params) {
			try("read "+r.Name, l, inPaths(get(base, l.path), paths), func(s string) error {
				_, err := e.System.Read(ctx(t), e.fix.Principal, r.Name, raw(t, with(base, l.path, s)))
				return err
			})
		}
	}
	if after := e.Effects(t, ""); after != before {
		t.Errorf("the backend recorded %d effects", after-before)
	}
}

// inPaths reports whether v, a string, is a whole segment of one of the
// recorded requests' paths.
func inPaths(v any, sent []string) bool {
	s, ok := v.(string)
	if !ok || s == "" {
		return false
	}
	for _, r := range sent {
		for seg := range strings.SplitSeq(pathOf(r), "/") {
			if d, err := url.PathUnescape(seg); err == nil && d == s {
				return true
			}
		}
	}
	return false
}

// stringLeaves are the string arguments, nested ones as "address.city".
func stringLeaves(ps []adapter.Param) []leaf {
	var out []leaf
	for _, l := range leaves(ps, "") {
		if l.param.Type == "string" {
			out = append(out, l)
		}
	}
	return out
}

// pathOf is the path of a recorded "GET /orders/1".
func pathOf(sent string) string {
	_, path, _ := strings.Cut(sent, " ")
	return path
}
