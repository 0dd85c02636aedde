package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries a delivery's signature:
// "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">".
const SignatureHeader = "Countersign-Signature"

// DeliveryHeader carries the delivery's id; a retry or a resend of the same
// event carries the same id, so a receiver can drop what it has seen.
const DeliveryHeader = "Countersign-Delivery"

// EventHeader carries the event's name, e.g. "invocation.completed".
const EventHeader = "Countersign-Event"

// DefaultTolerance is how far a signature's timestamp may be from the
// receiver's clock, either way, before Verify refuses it as a replay.
const DefaultTolerance = 5 * time.Minute

// Errors Verify returns, to be told apart with errors.Is.
var (
	// ErrNoSignature: the header is missing or has no t= or no v1=.
	ErrNoSignature = errors.New("webhooks: no signature")
	// ErrBadSignature: no v1= value matches the body and the secret.
	ErrBadSignature = errors.New("webhooks: signature does not match")
	// ErrTooOld: the timestamp is outside the tolerance (a replay, or a
	// clock far off).
	ErrTooOld = errors.New("webhooks: signature timestamp outside the tolerance")
)

// Sign returns the signature header's value for body sent at t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks a delivery the way a receiver should: header is the
// Countersign-Signature header, body the raw request body (before any JSON
// decoding), now the receiver's clock. It fails with ErrNoSignature,
// ErrTooOld or ErrBadSignature; tolerance zero means DefaultTolerance. Any
// one of several v1= values may match (there is one today).
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	var ts string
	var sigs []string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	if ts == "" || len(sigs) == 0 {
		return ErrNoSignature
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: t=%q is not a unix time", ErrNoSignature, ts)
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed %s from now", ErrTooOld, d.Round(time.Second))
	}
	want := []byte(mac(secret, ts, body))
	for _, s := range sigs {
		if hmac.Equal(want, []byte(s)) {
			return nil
		}
	}
	return ErrBadSignature
}
