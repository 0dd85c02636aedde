package httpadapter

import (
	"slices"
	"strings"

	"countersign/internal/adapter"
)

// An argument placed in a URL path stays in its segment: a value of ".",
// ".." or one holding a slash would send the request, with the system's
// credential, to another address (a normalising proxy serves the parent
// path). No description marks these arguments: the compiler finds every
// argument a path template places before its "?" (directly, through vars,
// or as the reference an object is read by) and marks it
// adapter.Param.PathSegment, which ValidateArgs checks before anything is
// read or sent; render refuses any other value that would move a path.

// pathPart is the part of a path template before its query.
func (t *template) pathPart() *template {
	if t == nil {
		return nil
	}
	out := &template{src: t.src, ptr: t.ptr}
	for _, p := range t.parts {
		if p.expr == nil && strings.Contains(p.text, "?") {
			break
		}
		out.parts = append(out.parts, p)
	}
	return out
}

// markActionPaths marks the arguments an action's requests, its dry run
// and its verifying read place in a path, and its target argument when
// its object is read by a path that holds the reference.
func markActionPaths(act *action) {
	vars := map[string]varRefs{}
	for _, v := range act.vars {
		if v.expr != nil {
			vars[v.name] = refsOfVar(v.expr.tree)
		}
	}
	var paths []*template
	for _, r := range []*request{act.request, act.dryRun} {
		if r != nil {
			paths = append(paths, r.path)
		}
	}
	paths = append(paths, act.verify.path)
	var args []argPath
	for _, t := range paths {
		args = append(args, templateArgs(t.pathPart(), vars)...)
	}
	if act.target != nil && templateUses(act.target.get.pathPart(), "id") {
		args = append(args, act.spec.TargetParam)
	}
	markPathSegments(act.spec.Params, args, "")
}

// markReadPaths does the same for a read tool: its own path, the list it
// reads, or the object it reads by its reference argument.
func markReadPaths(rt *readTool) {
	var args []argPath
	args = append(args, templateArgs(rt.path.pathPart(), nil)...)
	if rt.list != nil {
		args = append(args, templateArgs(rt.list.list.pathPart(), nil)...)
	}
	if rt.object != nil && templateUses(rt.object.get.pathPart(), "id") {
		args = append(args, rt.param)
	}
	markPathSegments(rt.spec.Params, args, "")
}

// markPathSegments marks each string parameter that one of args names or
// lies under (a whole object in a path is every field of it).
func markPathSegments(ps []adapter.Param, args []argPath, prefix string) {
	for i := range ps {
		p := &ps[i]
		name := prefix + p.Name
		if p.Type == "object" {
			markPathSegments(p.Properties, args, name+".")
			continue
		}
		if p.Type == "string" && slices.ContainsFunc(args, func(a argPath) bool { return len(covered(a, []argPath{name})) > 0 }) {
			p.PathSegment = true
		}
	}
}
