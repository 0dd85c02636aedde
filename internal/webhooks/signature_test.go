package webhooks_test

import (
	"errors"
	"testing"
	"time"

	"countersign/internal/webhooks"
)

func TestVerify(t *testing.T) {
	t.Parallel()
	const secret = "whsec_test"
	body := []byte(`{"event":"invocation.completed","event_id":7}`)
	signedAt := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	header := webhooks.Sign(secret, signedAt, body)
	other := webhooks.Sign("whsec_other", signedAt, body)
	cases := []struct {
		name   string
		secret string
		header string
		body   []byte
		now    time.Time
		want   error
	}{
		{"as signed", secret, header, body, signedAt, nil},
		{"within the tolerance", secret, header, body, signedAt.Add(4*time.Minute + 59*time.Second), nil},
		{"receiver clock a little behind", secret, header, body, signedAt.Add(-time.Minute), nil},
		{"one of two v1 values matches (rotation)", secret, other + ",v1=" + header[len("t=1775034000,v1="):], body, signedAt, nil},
		{"tampered body", secret, header, []byte(`{"event":"invocation.completed","event_id":8}`), signedAt, webhooks.ErrBadSignature},
		{"wrong secret", "whsec_guess", header, body, signedAt, webhooks.ErrBadSignature},
		{"timestamp changed", secret, "t=1775034001" + header[len("t=1775034000"):], body, signedAt, webhooks.ErrBadSignature},
		{"replayed after the tolerance", secret, header, body, signedAt.Add(5*time.Minute + time.Second), webhooks.ErrTooOld},
		{"from the future", secret, header, body, signedAt.Add(-6 * time.Minute), webhooks.ErrTooOld},
		{"no header", secret, "", body, signedAt, webhooks.ErrNoSignature},
		{"no v1", secret, "t=1775034000", body, signedAt, webhooks.ErrNoSignature},
		{"t not a number", secret, "t=soon,v1=00", body, signedAt, webhooks.ErrNoSignature},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := webhooks.Verify(tc.secret, tc.header, tc.body, tc.now, 0)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSignMatchesTheDocumentedFormula(t *testing.T) {
	t.Parallel()
	// HMAC-SHA256("whsec_test", "1775034000.{}"), computed independently
	// with: printf '1775034000.{}' | openssl dgst -sha256 -hmac whsec_test
	got := webhooks.Sign("whsec_test", time.Unix(1775034000, 0), []byte("{}"))
	want := "t=1775034000,v1=454ce200487927d2410cdb77ffb65a91a1bc71dae9bab46ca42f1cd18019ffbb"
	if got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

func TestBackoffDoublesUpToAnHour(t *testing.T) {
	t.Parallel()
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour}
	for i, w := range want {
		if got := webhooks.Backoff(i + 1); got != w {
			t.Errorf("Backoff(%d) = %s, want %s", i+1, got, w)
		}
	}
}
