package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"countersign/internal/adapter/conformance"
	"countersign/internal/httpadapter"
)

const systemsUsage = `countersign systems draft -openapi FILE [-out FILE] [-write operationId,...] [-name NAME]
countersign systems draft -graphql FILE [-out FILE] [-write mutation,...] [-name NAME]
countersign systems check FILE

draft writes a starting description file (internal/httpadapter/README.md)
from the system's OpenAPI 3.0/3.1 document, JSON or YAML: the base URL,
auth, objects, read tools for its GETs and one write action per -write
operation; or, with -graphql, from a GraphQL schema (SDL, or the JSON
answer of an introspection query): objects for the query fields that read
one by id, a read tool per query field, one action per -write mutation. What only a person can say is left as TODO strings, which the
file loads with, closed: its principal lookup and every object's owner
hold of nothing until written. draft does not replace an existing -out.
check loads a file as the console would (the same environment
variables), names every object without an owner and every read tool
field of internal data (risk_score, ...), and lists every TODO left;
exit status 0 only when it loads and none of these is left.
`

// runSystems is `countersign systems`.
func runSystems(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 {
		switch args[0] {
		case "draft":
			return runSystemsDraft(args[1:], stdout, stderr)
		case "check":
			return runSystemsCheck(args[1:], stdout, stderr, getenv)
		}
	}
	fmt.Fprint(stderr, systemsUsage)
	return 2
}

func runSystemsDraft(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("systems draft", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, systemsUsage+"\nFlags:\n"); fs.PrintDefaults() }
	openapi := fs.String("openapi", "", "the system's OpenAPI document, JSON or YAML (this or -graphql)")
	graphql := fs.String("graphql", "", "the system's GraphQL schema: SDL, or the JSON answer of an introspection query (this or -openapi)")
	out := fs.String("out", "", "where to write the description file; empty writes it to standard output")
	write := fs.String("write", "", "the operationIds that become write actions, comma-separated (at least one)")
	name := fs.String("name", "", "the system's name; empty derives it from the document's title")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	from, draft := *openapi, httpadapter.DraftFromOpenAPI
	if *graphql != "" {
		from, draft = *graphql, httpadapter.DraftFromGraphQL
	}
	if (*openapi == "") == (*graphql == "") {
		fs.Usage()
		return 2
	}
	raw, err := os.ReadFile(from)
	if err != nil {
		fmt.Fprintf(stderr, "systems draft: %v\n", err)
		return 2
	}
	var ops []string
	if *write != "" {
		ops = strings.Split(*write, ",")
	}
	d, err := draft(raw, httpadapter.DraftOptions{Name: *name, Write: ops})
	if err != nil {
		fmt.Fprintf(stderr, "systems draft: %s: %v\n", from, err)
		return 1
	}
	if *out == "" {
		_, err = stdout.Write(d.File)
	} else {
		err = writeNew(*out, d.File)
	}
	if err != nil {
		fmt.Fprintf(stderr, "systems draft: %v\n", err)
		return 1
	}
	for _, n := range d.Notes {
		fmt.Fprintln(stderr, "note: "+n)
	}
	fmt.Fprintf(stderr, "set %s before loading it; then fill in every TODO (countersign systems check %s lists them)\n",
		strings.Join(d.Env, ", "), orStdout(*out))
	return 0
}

// writeNew writes a file that must not exist yet: a draft never replaces
// a description someone may have finished.
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists; a draft does not replace it (choose another -out, or remove it first)", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func orStdout(out string) string {
	if out == "" {
		return "FILE"
	}
	return out
}

func runSystemsCheck(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) != 1 {
		fmt.Fprint(stderr, systemsUsage)
		return 2
	}
	raw, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "systems check: %v\n", err)
		return 2
	}
	code := 0
	if a, err := httpadapter.Load(args[0], raw, httpadapter.Config{Getenv: getenv}); err != nil {
		fmt.Fprintf(stdout, "does not load:\n%v\n", err)
		code = 1
	} else {
		fmt.Fprintf(stdout, "quotes in %s (default %s)\n", strings.Join(a.Locales(), ", "), a.DefaultLocale())
	}
	left, err := httpadapter.Unfinished(args[0], raw)
	var fe *httpadapter.FileError
	if errors.As(err, &fe) {
		return 1 // Load said it
	}
	exposed, _ := httpadapter.Exposed(args[0], raw, conformance.DefaultForbidden)
	for _, l := range exposed {
		fmt.Fprintln(stdout, l.Error())
	}
	if len(exposed) > 0 {
		fmt.Fprintf(stdout, "%d places open to every customer or showing internal data\n", len(exposed))
		code = 1
	}
	for _, l := range left {
		fmt.Fprintln(stdout, l.Error())
	}
	if len(left) > 0 {
		fmt.Fprintf(stdout, "%d TODOs left\n", len(left))
		return 1
	}
	if code == 0 {
		fmt.Fprintln(stdout, "loads; no TODO left")
	}
	return code
}
