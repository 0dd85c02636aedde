package confirmation_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"countersign/internal/confirmation"
)

// TestAssertionNamingAKeyTwiceIsMalformed: an assertion whose JSON names
// "sub" twice, correctly signed, is refused as malformed, so no reader of
// the first customer vouches for the last.
func TestAssertionNamingAKeyTwiceIsMalformed(t *testing.T) {
	t.Parallel()
	secret := []byte("the shop's assertion secret, 32+ bytes long")
	now := time.Unix(1_790_000_000, 0)
	sign := func(subs string) string {
		raw := fmt.Sprintf(`{%s,"sys":"shop","iat":%d,"exp":%d,"nonce":"n0nce-n0nce-n0nce-1","aud":"asst_1"}`,
			subs, now.Unix(), now.Add(time.Minute).Unix())
		payload := base64.RawURLEncoding.EncodeToString([]byte(raw))
		// What the business's site computes, as SignTaskAssertion says.
		m := hmac.New(sha256.New, secret)
		m.Write([]byte("countersign task assertion v1." + payload))
		return payload + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	secrets := map[string][]byte{"shop": secret}
	if a, why := confirmation.OpenTaskAssertion(secrets, sign(`"sub":"jordan@example.com"`), now); why != "" || a.Sub != "jordan@example.com" {
		t.Fatalf("the assertion with one sub: %+v, %q; want it opened", a, why)
	}
	if a, why := confirmation.OpenTaskAssertion(secrets, sign(`"sub":"jordan@example.com","sub":"hannah@example.com"`), now); why != "it is malformed." {
		t.Errorf("the assertion with two subs: %+v, %q; want it refused as malformed", a, why)
	}
}
