package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"

	"countersign/internal/audit"
	"countersign/store"
)

const auditUsage = `countersign audit keygen -name ORIGIN
countersign audit sign
countersign audit export [-from DATE -to DATE] [-system S] [-action A] [-person P] [-customer C] -out PREFIX
countersign audit verify -key VERIFIER_KEY [-checkpoint FILE [-consistency FILE]] PREFIX.jsonl

keygen prints a new signing key (keep it secret: -audit-key-file) and its
verifier key (publish it). sign signs a checkpoint of the trail now. export
writes PREFIX.jsonl, PREFIX.csv and PREFIX.sig: the trail's entries logged
in [-from, -to) (default: last calendar month, UTC), each with its
inclusion proof, and the checkpoint they are proved against; sign and
export read DATABASE_URL and the key from AUDIT_SIGNING_KEY or
AUDIT_SIGNING_KEY_FILE. verify checks an export offline
(internal/audit/README.md): exit status 0 when it holds, 1 with the
reason when not, 2 when the files cannot be read.
`

// runAudit is `countersign audit`.
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, auditUsage)
		return 2
	}
	switch args[0] {
	case "keygen":
		return auditKeygen(args[1:], stdout, stderr)
	case "sign", "export":
		return auditWithDatabase(ctx, args[0], args[1:], stdout, stderr, getenv)
	case "verify":
		return auditVerify(args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, auditUsage)
	return 2
}

func auditKeygen(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("audit keygen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "", "the trail's origin, e.g. console.example.com/audit (required)")
	if err := fs.Parse(args); err != nil || *name == "" {
		fmt.Fprint(stderr, auditUsage)
		return 2
	}
	skey, vkey, err := audit.GenerateKey(*name)
	if err != nil {
		fmt.Fprintln(stderr, "audit keygen:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n%s\n", skey, vkey)
	return 0
}

func auditWithDatabase(ctx context.Context, verb string, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("audit "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	lastMonth := time.Now().UTC().AddDate(0, -1, 0)
	from := fs.String("from", time.Date(lastMonth.Year(), lastMonth.Month(), 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly), "first day (or RFC 3339 time) of the period")
	to := fs.String("to", time.Date(lastMonth.Year(), lastMonth.Month()+1, 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly), "end of the period (exclusive)")
	var f audit.Filter
	fs.StringVar(&f.System, "system", "", "only this system's entries")
	fs.StringVar(&f.Action, "action", "", "only this action's entries")
	fs.StringVar(&f.Person, "person", "", "only the events of this actor id")
	fs.StringVar(&f.Customer, "customer", "", "only this customer reference's entries")
	out := fs.String("out", "", "write PREFIX.jsonl, PREFIX.csv and PREFIX.sig (export; required)")
	if err := fs.Parse(args); err != nil || (verb == "export" && *out == "") {
		fmt.Fprint(stderr, auditUsage)
		return 2
	}
	fail := func(err error) int { fmt.Fprintf(stderr, "audit %s: %v\n", verb, err); return 1 }
	var err error
	if f.From, err = parseDay(*from); err != nil {
		return fail(fmt.Errorf("-from: %w", err))
	}
	if f.To, err = parseDay(*to); err != nil {
		return fail(fmt.Errorf("-to: %w", err))
	}
	cfg := config{AuditKey: getenv("AUDIT_SIGNING_KEY"), AuditKeyFile: getenv("AUDIT_SIGNING_KEY_FILE"), DatabaseURL: getenv("DATABASE_URL")}
	if cfg.DatabaseURL == "" {
		return fail(errors.New("set DATABASE_URL"))
	}
	keys, ok, err := cfg.auditKeys(io.Discard)
	if err != nil || !ok {
		return fail(errors.Join(err, errors.New("set AUDIT_SIGNING_KEY or AUDIT_SIGNING_KEY_FILE")))
	}
	pool, err := store.Open(ctx, cfg.DatabaseURL, 30*time.Second)
	if err != nil {
		return fail(err)
	}
	defer pool.Close()
	l := audit.NewLog(store.New(pool), keys, time.Now)
	if verb == "sign" {
		cp, err := l.Sign(ctx)
		if err != nil {
			return fail(err)
		}
		fmt.Fprint(stdout, cp.Note)
		return 0
	}
	files, err := l.Export(ctx, f)
	if err != nil {
		return fail(err)
	}
	for ext, b := range map[string][]byte{".jsonl": files.JSONL, ".csv": files.CSV, ".sig": files.Sig} {
		if err := os.WriteFile(*out+ext, b, 0o600); err != nil {
			return fail(err)
		}
	}
	fmt.Fprintf(stdout, "wrote %[1]s.jsonl, %[1]s.csv, %[1]s.sig\ncheck it: countersign audit verify -key %[2]s %[1]s.jsonl\n", *out, keys.VerifierKey)
	return 0
}

// parseDay reads a date (midnight UTC) or an RFC 3339 time.
func parseDay(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}

func auditVerify(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	key := fs.String("key", "", "the trail's verifier key (GET /audit/key), or a file holding it (required)")
	later := fs.String("checkpoint", "", "a checkpoint you hold (GET /audit/checkpoint), to check the export's is consistent with it")
	consistency := fs.String("consistency", "", "the proof between the two sizes (GET /audit/consistency?from=M&to=N)")
	if err := fs.Parse(args); err != nil || *key == "" || fs.NArg() != 1 {
		fmt.Fprint(stderr, auditUsage)
		return 2
	}
	unreadable := func(err error) int { fmt.Fprintln(stderr, "audit verify:", err); return 2 }
	vkey := *key
	if b, err := os.ReadFile(vkey); err == nil {
		vkey = strings.TrimSpace(string(b))
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return unreadable(fmt.Errorf("-key: not a verifier key (name+hash+base64): %w", err))
	}
	prefix := strings.TrimSuffix(fs.Arg(0), ".jsonl")
	var files audit.Files
	for _, f := range []struct {
		ext string
		to  *[]byte
	}{{".jsonl", &files.JSONL}, {".csv", &files.CSV}, {".sig", &files.Sig}} {
		if *f.to, err = os.ReadFile(prefix + f.ext); err != nil {
			return unreadable(err)
		}
	}
	var l *audit.Later
	if *later != "" {
		l = &audit.Later{}
		if l.Checkpoint, err = os.ReadFile(*later); err != nil {
			return unreadable(err)
		}
		if *consistency != "" {
			b, err := os.ReadFile(*consistency)
			if err != nil {
				return unreadable(err)
			}
			l.Consistency = &audit.Consistency{}
			if err := json.Unmarshal(b, l.Consistency); err != nil {
				return unreadable(fmt.Errorf("-consistency: %w", err))
			}
		}
	}
	r, err := audit.Verify(files, v, l)
	if err != nil {
		fmt.Fprintln(stdout, "FAILED:", err)
		return 1
	}
	fmt.Fprintf(stdout, "OK: %d lines, leaves %d to %d, untouched and in the checkpoint of %s, size %d, signed %s\n",
		r.Lines, r.First, r.Last, r.Checkpoint.Origin, r.Checkpoint.Size, r.Checkpoint.Time.Format(time.RFC3339))
	if r.Later != nil {
		fmt.Fprintf(stdout, "OK: consistent with the checkpoint of size %d, signed %s\n", r.Later.Size, r.Later.Time.Format(time.RFC3339))
	}
	return 0
}
