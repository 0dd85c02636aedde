package adapter

import (
	"net/url"
	"strings"
)

// PathSegmentProblem is the field error of an argument that is placed in a
// URL path as one segment: "." and ".." walk the path, and "/" or "\"
// split it (url.PathEscape leaves dots as they are, and a server or a
// normalising proxy in front of it may decode %2F, %2e or %5C, even
// twice), so the request, with the business's credential, would reach
// another address than the one the action names.
const PathSegmentProblem = `must not be "." or ".." or contain "/" or "\"`

// maxDecodes bounds how often a segment is percent-decoded when looking
// for what a server that decodes too often would see.
const maxDecodes = 3

// MovesPath reports whether s, placed in a URL path as one segment, would
// leave its place: it is a dot segment or holds a slash or backslash, as
// it is or percent-decoded up to three times.
func MovesPath(s string) bool {
	for range maxDecodes + 1 {
		if s == "." || s == ".." || strings.ContainsAny(s, `/\`) {
			return true
		}
		d, err := url.PathUnescape(s)
		if err != nil || d == s {
			return false
		}
		s = d
	}
	return false
}

// PathSegment escapes s as one segment of a URL path, or refuses it with
// an invalid_arguments *Error naming param when it would leave its place
// (MovesPath). Every adapter builds a path from a value through it, or
// through a Param marked PathSegment, which ValidateArgs checks.
func PathSegment(param, s string) (string, error) {
	if MovesPath(s) {
		return "", Invalid(map[string]string{param: PathSegmentProblem})
	}
	return url.PathEscape(s), nil
}

// PathMoves reports whether an escaped URL path ("/orders/..",
// "/orders/a%2Fb") has a segment that would leave its place (MovesPath):
// Exchange sends no such request, and the conformance suite fails an
// adapter that sends one.
func PathMoves(escapedPath string) bool {
	for seg := range strings.SplitSeq(escapedPath, "/") {
		if seg != "" && MovesPath(seg) {
			return true
		}
	}
	return false
}
