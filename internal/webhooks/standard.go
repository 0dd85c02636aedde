package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers (standardwebhooks.com) every delivery
// carries: the message id (the delivery's, the same on every retry and
// resend), the unix time it was signed at, and its signatures.
const (
	IDHeader                = "webhook-id"
	TimestampHeader         = "webhook-timestamp"
	StandardSignatureHeader = "webhook-signature"
)

// secretKey is the HMAC key of a signing secret under Standard Webhooks:
// the base64 after whsec_. Every secret Register made decodes (the older
// ones are hex, whose digits are base64 too).
func secretKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil {
		return nil, fmt.Errorf("webhooks: the signing secret is not base64 after %s: %w", SecretPrefix, err)
	}
	return key, nil
}

// SignStandard returns the webhook-signature value of a delivery with
// message id id, body body, signed at t: "v1," and the base64 of
// HMAC-SHA256(key, "<id>.<unix t>.<body>").
func SignStandard(secret, id string, t time.Time, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	return "v1," + standardMAC(key, id, strconv.FormatInt(t.Unix(), 10), body), nil
}

func standardMAC(key []byte, id, ts string, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// VerifyStandard checks a delivery's Standard Webhooks headers the way a
// receiver should: on the raw body, before any JSON decoding, against the
// receiver's clock now. It fails with ErrNoSignature (a header missing, or
// a timestamp that is not a number), ErrTooOld (outside the tolerance,
// either way; zero means DefaultTolerance) or ErrBadSignature (no v1
// signature of the space-separated list matches).
func VerifyStandard(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	id, ts, sigs := h.Get(IDHeader), h.Get(TimestampHeader), h.Get(StandardSignatureHeader)
	if id == "" || ts == "" || sigs == "" {
		return ErrNoSignature
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s %q is not a unix time", ErrNoSignature, TimestampHeader, ts)
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed %s from now", ErrTooOld, d.Round(time.Second))
	}
	key, err := secretKey(secret)
	if err != nil {
		return err
	}
	want := []byte(standardMAC(key, id, ts, body))
	for sig := range strings.FieldsSeq(sigs) {
		if v, ok := strings.CutPrefix(sig, "v1,"); ok && hmac.Equal(want, []byte(v)) {
			return nil
		}
	}
	return ErrBadSignature
}
