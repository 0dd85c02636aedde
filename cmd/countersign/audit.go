package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"countersign/internal/audit"
	"countersign/store"
)

// auditKeys reads the trail's signing key: -audit-key, or -audit-key-file;
// in demo mode without either, a key generated once into the data dir,
// whose verifier key is printed for the auditor. ok is false when no key
// is configured outside demo mode: the trail is appended but not signed.
func (c config) auditKeys(out io.Writer) (audit.Keys, bool, error) {
	skey := c.AuditKey
	if skey == "" && c.AuditKeyFile != "" {
		b, err := os.ReadFile(c.AuditKeyFile)
		if err != nil {
			return audit.Keys{}, false, fmt.Errorf("-audit-key-file: %w", err)
		}
		skey = string(b)
	}
	if skey == "" && c.demo() {
		path := filepath.Join(c.DataDir, "audit-key")
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			if skey, _, err = audit.GenerateKey(c.auditOrigin()); err != nil {
				return audit.Keys{}, false, err
			}
			if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
				return audit.Keys{}, false, err
			}
			if err := os.WriteFile(path, []byte(skey+"\n"), 0o600); err != nil {
				return audit.Keys{}, false, err
			}
		} else if err != nil {
			return audit.Keys{}, false, err
		} else {
			skey = string(b)
		}
	}
	if skey == "" {
		return audit.Keys{}, false, nil
	}
	keys, err := audit.LoadKeys(skey)
	if err != nil {
		return audit.Keys{}, false, fmt.Errorf("-audit-key: %w", err)
	}
	if c.demo() {
		fmt.Fprintf(out, "Audit trail verifier key: %s\n", keys.VerifierKey)
	}
	return keys, true, nil
}

// auditOrigin names the demo's trail: the console's host, then /audit.
func (c config) auditOrigin() string {
	host := c.Addr
	if u, err := url.Parse(c.publicBase()); err == nil && u.Host != "" {
		host = u.Host
	}
	return strings.ReplaceAll(host, "+", "-") + "/audit"
}

// startAudit makes the trail's log and signs at -audit-sign-interval until
// ctx ends; nil when no key is configured.
func (c config) startAudit(ctx context.Context, st *store.Store, log *slog.Logger, out io.Writer) (*audit.Log, error) {
	keys, ok, err := c.auditKeys(out)
	if err != nil || !ok {
		if err == nil {
			log.Warn("no -audit-key: the trail is appended but no checkpoint is signed; see internal/audit/README.md")
		}
		return nil, err
	}
	l := audit.NewLog(st, keys, time.Now)
	go l.SignEvery(ctx, c.AuditSignEvery, log)
	return l, nil
}
