package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"countersign/internal/webhooks"
)

// specVerify is a receiver's check written from the Standard Webhooks
// specification alone (standardwebhooks.com, "Verifying webhook
// signatures"), sharing no code with the package: the signed content is
// "<webhook-id>.<webhook-timestamp>.<raw body>"; the key is the base64
// after the "whsec_" prefix of the secret; the signature is HMAC-SHA256,
// base64 (standard alphabet, padded); webhook-signature is a space-delimited
// list of "v1,<signature>", any one of which may match; a timestamp more
// than five minutes from the receiver's clock is refused.
func specVerify(secret string, h http.Header, body []byte, now time.Time) error {
	id, ts, list := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || list == "" {
		return errors.New("a Standard Webhooks header is missing")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("webhook-timestamp is not integer seconds")
	}
	if skew := now.Unix() - sec; skew > 300 || skew < -300 {
		return errors.New("webhook-timestamp is more than five minutes off")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return errors.New("the secret is not base64 after whsec_")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	expected := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, versioned := range strings.Split(list, " ") {
		version, sig, ok := strings.Cut(versioned, ",")
		if ok && version == "v1" && hmac.Equal([]byte(sig), []byte(expected)) {
			return nil
		}
	}
	return errors.New("no v1 signature matches")
}

// The test vector of the Standard Webhooks reference libraries.
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorAt     = 1614265330
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignStandardMatchesTheSpecsTestVector(t *testing.T) {
	t.Parallel()
	got, err := webhooks.SignStandard(vectorSecret, vectorID, time.Unix(vectorAt, 0), []byte(vectorBody))
	if err != nil || got != vectorSig {
		t.Errorf("SignStandard = %q, %v; want %q", got, err, vectorSig)
	}
	h := http.Header{}
	h.Set("webhook-id", vectorID)
	h.Set("webhook-timestamp", strconv.Itoa(vectorAt))
	h.Set("webhook-signature", vectorSig)
	if err := specVerify(vectorSecret, h, []byte(vectorBody), time.Unix(vectorAt, 0)); err != nil {
		t.Errorf("the spec's own vector fails the spec's receiver: %v", err)
	}
}

func TestVerifyStandard(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"event":"invocation.completed","event_id":7}`)
	signedAt := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	sig, err := webhooks.SignStandard(secret, "4711", signedAt, body)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := webhooks.SignStandard("whsec_"+base64.StdEncoding.EncodeToString([]byte("another key of 24 bytes!")), "4711", signedAt, body)
	headers := func(id, ts, sig string) http.Header {
		h := http.Header{}
		for k, v := range map[string]string{"webhook-id": id, "webhook-timestamp": ts, "webhook-signature": sig} {
			if v != "" {
				h.Set(k, v)
			}
		}
		return h
	}
	ts := strconv.FormatInt(signedAt.Unix(), 10)
	cases := []struct {
		name   string
		header http.Header
		body   []byte
		now    time.Time
		want   error
	}{
		{"as signed", headers("4711", ts, sig), body, signedAt, nil},
		{"one of two signatures matches (rotation)", headers("4711", ts, other+" "+sig), body, signedAt, nil},
		{"within the tolerance", headers("4711", ts, sig), body, signedAt.Add(5 * time.Minute), nil},
		{"tampered body", headers("4711", ts, sig), []byte(`{"event":"invocation.failed","event_id":7}`), signedAt, webhooks.ErrBadSignature},
		{"another message id", headers("4712", ts, sig), body, signedAt, webhooks.ErrBadSignature},
		{"timestamp changed", headers("4711", strconv.FormatInt(signedAt.Unix()+1, 10), sig), body, signedAt, webhooks.ErrBadSignature},
		{"another secret's signature", headers("4711", ts, other), body, signedAt, webhooks.ErrBadSignature},
		{"v2 is not v1", headers("4711", ts, "v2,"+strings.TrimPrefix(sig, "v1,")), body, signedAt, webhooks.ErrBadSignature},
		{"replayed after the tolerance", headers("4711", ts, sig), body, signedAt.Add(5*time.Minute + time.Second), webhooks.ErrTooOld},
		{"from the future", headers("4711", ts, sig), body, signedAt.Add(-6 * time.Minute), webhooks.ErrTooOld},
		{"no id", headers("", ts, sig), body, signedAt, webhooks.ErrNoSignature},
		{"no signature", headers("4711", ts, ""), body, signedAt, webhooks.ErrNoSignature},
		{"timestamp not a number", headers("4711", "soon", sig), body, signedAt, webhooks.ErrNoSignature},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := webhooks.VerifyStandard(secret, tc.header, tc.body, tc.now, 0)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("VerifyStandard = %v, want %v", err, tc.want)
			}
			// The receiver written from the spec agrees.
			if specErr := specVerify(secret, tc.header, tc.body, tc.now); (specErr == nil) != (tc.want == nil) {
				t.Errorf("the spec's receiver says %v, VerifyStandard %v", specErr, err)
			}
		})
	}
}

// TestDeliveriesFollowStandardWebhooks: every delivery verifies under the
// spec's receiver (the receiver of every worker test checks it), with the
// secret Register handed out, and carries Countersign-Signature only when
// LegacySignature asks for it; then it verifies under Verify too.
func TestDeliveriesFollowStandardWebhooks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if !strings.HasPrefix(b.secret, "whsec_") {
		t.Fatalf("secret %q lacks whsec_", b.secret)
	}
	if key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(b.secret, "whsec_")); err != nil || len(key) < 24 || len(key) > 64 {
		t.Errorf("secret %q: %d bytes of key, %v; the spec wants base64 of 24 to 64", b.secret, len(key), err)
	}
	b.invocation(t, "tsk_hook", "inv_a")
	b.event(t, "tsk_hook", "inv_a", "invocation.approved")
	w := b.workerWith(t, webhooks.Config{AllowPrivate: true})
	n, err := w.Enqueue(b.ctx)
	mustN(t, "enqueued", n, err, 1)
	n, err = w.DeliverDue(b.ctx)
	mustN(t, "attempts", n, err, 1)

	b.event(t, "tsk_hook", "inv_a", "invocation.completed")
	legacy := b.workerWith(t, webhooks.Config{AllowPrivate: true, LegacySignature: true})
	n, err = legacy.Enqueue(b.ctx)
	mustN(t, "enqueued", n, err, 1)
	n, err = legacy.DeliverDue(b.ctx)
	mustN(t, "attempts", n, err, 1)

	got := b.recv.all()
	if len(got) != 2 {
		t.Fatalf("received %d, want 2", len(got))
	}
	for _, g := range got {
		if g.sigErr != nil {
			t.Errorf("%s: a Standard Webhooks receiver refuses it: %v", g.event, g.sigErr)
		}
	}
	if got[0].legacy != "" {
		t.Errorf("by default a delivery carries Countersign-Signature %q", got[0].legacy)
	}
	if err := webhooks.Verify(b.secret, got[1].legacy, got[1].body, got[1].at, 0); err != nil {
		t.Errorf("with LegacySignature, Countersign-Signature %q: %v", got[1].legacy, err)
	}
}
