package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/custkeys"
	"countersign/internal/factors"
	"countersign/internal/mail"
	"countersign/store"
)

// factorKey decodes -factor-key: the base64 of factors.KeySize bytes.
func (c config) factorKey() ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(c.FactorKey)
	if err != nil || len(key) != factors.KeySize {
		return nil, fmt.Errorf("want the base64 of %d random bytes, e.g. from: openssl rand -base64 32", factors.KeySize)
	}
	return key, nil
}

// factors is the second-factor service: over -factor-key, or in demo mode
// over a key derived from the demo's session key (said in the log). With
// neither, second factors are off, and the console refuses to start when
// the database holds factors or a role requires one: signing those people
// in with a password alone would lower what the admin asked for.
func (c config) factors(ctx context.Context, st *store.Store, acc *accounts.Service, sessionKey []byte, log *slog.Logger) (*factors.Service, error) {
	var key []byte
	switch {
	case c.FactorKey != "":
		var err error
		if key, err = c.factorKey(); err != nil {
			return nil, fmt.Errorf("-factor-key: %w", err)
		}
	case c.demo():
		m := hmac.New(sha256.New, sessionKey)
		m.Write([]byte("countersign demo factor key"))
		key = m.Sum(nil)
		log.Warn("no FACTOR_KEY configured: demo mode seals authenticator secrets with a key derived from its session key; set -factor-key in production")
	default:
		inUse, err := st.FactorsInUse(ctx)
		if err != nil {
			return nil, err
		}
		if inUse {
			return nil, errors.New("-factor-key: this database has second factors (or a role that requires one) but FACTOR_KEY is not set; " +
				"set it to the key they were set up with")
		}
		log.Info("second factors are off: set -factor-key (FACTOR_KEY) to let staff set up authenticator apps")
		return nil, nil
	}
	public := c.publicBase()
	if _, _, err := factors.RelyingParty(public); err != nil {
		log.Warn("passkeys are off: "+err.Error(), "flag", "-public-url")
		public = ""
	}
	return factors.New(st, acc, factors.Config{Key: key, Issuer: "Countersign", PublicURL: public, Log: log})
}

// customerPasskeys builds returning customers' passkeys over the console's
// public URL, the relying party staff passkeys use; at an IP address
// (the default -addr without -public-url) they are off, and the log says so.
// Their notices go by send, as the customers' other mail does.
func (c config) customerPasskeys(st *store.Store, registry *adapter.Registry, send mail.Sender, log *slog.Logger) (*custkeys.Service, error) {
	public := c.publicBase()
	if _, _, err := factors.RelyingParty(public); err != nil {
		log.Warn("customer passkeys are off: "+err.Error(), "flag", "-public-url")
		public = ""
	}
	return custkeys.New(st, custkeys.Config{PublicURL: public, Log: log, Mail: send, Registry: registry})
}
