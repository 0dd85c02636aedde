package accounts

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"
)

// argon2id parameters: OWASP's second recommended set (19 MiB, 2 passes).
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
)

// MinPasswordLength is the shortest password accepted for a new password.
const MinPasswordLength = 12

var errBadHash = errors.New("accounts: malformed password hash")

// HashPassword returns an argon2id hash of password in the PHC string format.
func HashPassword(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("accounts: salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemoryKiB, argonTime, argonThreads, enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// CheckPassword reports whether password matches hash. The comparison takes
// the same time whether or not it matches.
func CheckPassword(hash, password string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	var mem, iters uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &iters, &threads); err != nil {
		return false, errBadHash
	}
	enc := base64.RawStdEncoding
	salt, err := enc.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := enc.DecodeString(parts[5])
	if err != nil {
		return false, errBadHash
	}
	got := argon2.IDKey([]byte(password), salt, iters, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// UnusablePasswordHash is the password hash of an account that signs in
// only through an identity provider: the hash of a random secret thrown
// away once hashed, so no password matches it, and a password sign-in at
// such an account costs what a wrong password costs. It is computed once
// per process, on first use, not at every sign-in.
var UnusablePasswordHash = sync.OnceValue(func() string {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	h, err := HashPassword(base64.RawStdEncoding.EncodeToString(secret))
	if err != nil {
		panic(err)
	}
	return h
})

// dummyHash is checked against when the account does not exist, so that an
// unknown e-mail costs as much time as a wrong password.
var dummyHash = func() string {
	h, err := HashPassword("countersign-timing-equaliser")
	if err != nil {
		panic(err)
	}
	return h
}()
