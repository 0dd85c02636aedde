package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"countersign/internal/confirmation"
	"countersign/internal/mail"
)

// parseProofs reads -confirm-proof: comma-separated entries, each
// "[system=]proof[+proof…]"; an entry without a system applies to every
// system not named. Proofs are link, code, account, assertion and passkey
// (a passkey is accepted wherever the account is, named or not); a system
// not named takes confirmation.DefaultProofs (link and account).
func parseProofs(s string) (map[string][]confirmation.Proof, error) {
	out := map[string][]confirmation.Proof{}
	for _, entry := range splitList(s) {
		system, list, named := strings.Cut(entry, "=")
		if !named {
			system, list = "*", entry
		}
		system = strings.TrimSpace(system)
		if system == "" {
			return nil, fmt.Errorf("%q: name the system before '=', e.g. shop=code+account", entry)
		}
		if _, dup := out[system]; dup {
			return nil, fmt.Errorf("%q: system %s is named twice", entry, system)
		}
		var proofs []confirmation.Proof
		for _, name := range strings.Split(list, "+") {
			p, ok := confirmation.ParseProof(strings.TrimSpace(name))
			if !ok {
				return nil, fmt.Errorf("%q: unknown proof %q; want link, code, account, assertion or passkey joined by +", entry, name)
			}
			proofs = append(proofs, p)
		}
		out[system] = proofs
	}
	if _, ok := out["*"]; !ok {
		out["*"] = confirmation.DefaultProofs
	}
	return out, nil
}

// parseSecrets reads -assertion-secrets: "system=<hex>" entries, each
// secret at least 32 bytes.
func parseSecrets(s string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for i, entry := range splitList(s) {
		system, h, ok := strings.Cut(entry, "=")
		raw, err := hex.DecodeString(strings.TrimSpace(h))
		if !ok || strings.TrimSpace(system) == "" || err != nil || len(raw) < 32 {
			// The entry itself is a secret: never echo it.
			return nil, fmt.Errorf("entry %d: want system=<at least 64 hex characters>; make one with: openssl rand -hex 32", i+1)
		}
		out[strings.TrimSpace(system)] = raw
	}
	return out, nil
}

// confirmationConfig builds how customers prove who they are: the proofs
// each system accepts, the assertion secrets, the link key (derived from
// the newest session key, so every console instance makes the same links;
// the older session keys' link keys keep the links made before a rotation)
// and where mail links and codes are mailed: the SMTP server when one is
// configured, else the mail folder (in demo mode <data-dir>/mail), with
// links to the console's public address.
func (c config) confirmationConfig(sessionKeys [][]byte, log *slog.Logger) confirmation.Config {
	proofs, _ := parseProofs(c.ConfirmProof)       // checked by validate
	secrets, _ := parseSecrets(c.AssertionSecrets) // checked by validate
	linkKey := func(sessionKey []byte) []byte {
		m := hmac.New(sha256.New, sessionKey)
		m.Write([]byte("countersign confirmation link key"))
		return m.Sum(nil)
	}
	cfg := confirmation.Config{Proofs: proofs, AssertionSecrets: secrets, LinkKey: linkKey(sessionKeys[0]), PublicBase: c.publicBase(), Log: log}
	for _, k := range sessionKeys[1:] {
		cfg.OldLinkKeys = append(cfg.OldLinkKeys, linkKey(k)) // links made before a rotation stay
	}
	from := c.MailFrom
	switch {
	case c.SMTPAddr != "":
		cfg.Mail = mail.SMTP{Addr: c.SMTPAddr, User: c.SMTPUser, Password: c.SMTPPassword, From: from}
	case c.mailDir() != "":
		cfg.Mail = mail.Dir{Path: c.mailDir(), From: from}
	default:
		log.Warn("no mail configured: customers cannot be mailed a link or a code to confirm; set -smtp-addr or -mail-dir, or accept other proofs with -confirm-proof")
	}
	return cfg
}

// siteSecrets are the secrets task assertions are checked with: those of
// -assertion-secrets, and for a system it does not name, the demo's (nil
// outside demo mode).
func (c config) siteSecrets(demo map[string][]byte) map[string][]byte {
	secrets, _ := parseSecrets(c.AssertionSecrets) // checked by validate
	if secrets == nil {
		secrets = map[string][]byte{}
	}
	for system, secret := range demo {
		if _, ok := secrets[system]; !ok {
			secrets[system] = secret
		}
	}
	return secrets
}

// mailDir is where codes are written when there is no mail server.
func (c config) mailDir() string {
	if c.MailDir == "" && c.demo() {
		return filepath.Join(c.DataDir, "mail")
	}
	return c.MailDir
}
