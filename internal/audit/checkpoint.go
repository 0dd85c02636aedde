package audit

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// Checkpoint is a signed statement of the trail's state in the C2SP
// tlog-checkpoint format: the origin line (the log's name, also the
// signing key's name), the tree size, the base64 root hash, and one
// extension line "time <RFC 3339>" saying when it was signed.
type Checkpoint struct {
	Origin string
	Size   uint64
	Root   []byte
	Time   time.Time
}

// Text is the checkpoint's body, the text the note signs.
func (c Checkpoint) Text() string {
	return fmt.Sprintf("%s\n%d\n%s\ntime %s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Root),
		c.Time.UTC().Format(time.RFC3339))
}

// ErrOtherKey is the refusal of a checkpoint or an export signature that
// the trail's key did not sign.
var ErrOtherKey = errors.New("not signed by the trail's key")

// Sign signs the checkpoint with signer; the result is a C2SP signed note.
func Sign(c Checkpoint, signer note.Signer) ([]byte, error) {
	msg, err := note.Sign(&note.Note{Text: c.Text()}, signer)
	if err != nil {
		return nil, fmt.Errorf("audit: sign checkpoint: %w", err)
	}
	return msg, nil
}

// OpenCheckpoint checks a signed checkpoint against the trail's verifier
// and parses it. A note not signed by that key fails with ErrOtherKey.
func OpenCheckpoint(msg []byte, v note.Verifier) (Checkpoint, error) {
	n, err := openNote(msg, v)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	return ParseCheckpoint(n.Text)
}

// openNote opens a note signed by v, naming the keys that signed it when
// v is not among them.
func openNote(msg []byte, v note.Verifier) (*note.Note, error) {
	n, err := note.Open(msg, note.VerifierList(v))
	var unknown *note.UnverifiedNoteError
	if errors.As(err, &unknown) {
		var by []string
		for _, s := range unknown.Note.UnverifiedSigs {
			by = append(by, fmt.Sprintf("%s+%08x", s.Name, s.Hash))
		}
		return nil, fmt.Errorf("%w %s+%08x (signed by %s)", ErrOtherKey, v.Name(), v.KeyHash(), strings.Join(by, ", "))
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

// ParseCheckpoint reads a checkpoint's body (no signature check).
func ParseCheckpoint(text string) (Checkpoint, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		return Checkpoint{}, errors.New("checkpoint: fewer than three lines")
	}
	size, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: size %q: %w", lines[1], err)
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != 32 {
		return Checkpoint{}, fmt.Errorf("checkpoint: root %q is not a base64 SHA-256 hash", lines[2])
	}
	c := Checkpoint{Origin: lines[0], Size: size, Root: root}
	for _, ext := range lines[3:] {
		if t, ok := strings.CutPrefix(ext, "time "); ok {
			if c.Time, err = time.Parse(time.RFC3339, t); err != nil {
				return Checkpoint{}, fmt.Errorf("checkpoint: time %q: %w", t, err)
			}
		}
	}
	return c, nil
}

// Keys are the trail's signing key and the verifier key auditors hold.
type Keys struct {
	Signer   note.Signer
	Verifier note.Verifier
	// VerifierKey is the verifier in note's text form (name+hash+base64),
	// what the console publishes and `audit verify -key` takes.
	VerifierKey string
}

// GenerateKey makes a new Ed25519 key named name (the log's origin): the
// private key's text form (keep it secret) and the public verifier key's.
func GenerateKey(name string) (skey, vkey string, err error) {
	skey, vkey, err = note.GenerateKey(rand.Reader, name)
	if err != nil {
		return "", "", fmt.Errorf("audit: generate key %q: %w", name, err)
	}
	return skey, vkey, nil
}

// LoadKeys reads a private key in note's text form (PRIVATE+KEY+name+
// hash+base64) and derives its verifier. The error never repeats the key.
func LoadKeys(skey string) (Keys, error) {
	skey = strings.TrimSpace(skey)
	signer, err := note.NewSigner(skey)
	if err != nil {
		return Keys{}, errors.New("audit: the signing key is not a note private key (PRIVATE+KEY+name+hash+base64)")
	}
	vkey, err := verifierKey(skey)
	if err != nil {
		return Keys{}, err
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return Keys{}, fmt.Errorf("audit: verifier of the signing key: %w", err)
	}
	return Keys{Signer: signer, Verifier: v, VerifierKey: vkey}, nil
}

// verifierKey derives name+hash+base64(0x01 || public key) from a note
// private key, which holds the Ed25519 seed.
func verifierKey(skey string) (string, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 {
		return "", errors.New("audit: the signing key has not five parts")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[4])
	if err != nil || len(raw) != 33 || raw[0] != 1 {
		return "", errors.New("audit: the signing key is not an Ed25519 note key")
	}
	pub := ed25519Public(raw[1:])
	return parts[2] + "+" + parts[3] + "+" + base64.StdEncoding.EncodeToString(append([]byte{1}, pub...)), nil
}

// equalRoots says whether two roots are the same hash.
func equalRoots(a, b []byte) bool { return bytes.Equal(a, b) }

func ed25519Public(seed []byte) []byte {
	return ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
}
