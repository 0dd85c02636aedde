package httpadapter

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Request signing: "hmac" signs every request with HMAC-SHA256 under the
// secret, over the parts the file names in its order ("method", "path"
// with the query as sent, "timestamp" in Unix seconds, "body" as the bytes
// sent, empty for a GET) joined by the separator, and sends the signature,
// hex or base64, after the prefix in the file's header; the timestamp goes
// in timestamp_header. The system recomputes it and refuses a request
// that does not match.

// signer is an hmac authorizer; every request gets its own signature.
type signer struct {
	secret          []byte
	parts           []string
	separator       string
	base64          bool
	header, prefix  string
	timestampHeader string
	now             func() time.Time
}

func (s *signer) credential(context.Context) (credential, error) { return s, nil }
func (s *signer) refused() bool                                  { return false }

func (s *signer) apply(req *http.Request, body []byte) {
	ts := strconv.FormatInt(s.now().Unix(), 10)
	var msg []string
	for _, p := range s.parts {
		switch p {
		case "method":
			msg = append(msg, req.Method)
		case "path":
			msg = append(msg, req.URL.RequestURI())
		case "timestamp":
			msg = append(msg, ts)
		case "body":
			msg = append(msg, string(body))
		}
	}
	mac := hmac.New(sha256.New, s.secret)
	mac.Write([]byte(strings.Join(msg, s.separator)))
	sum := mac.Sum(nil)
	sig := hex.EncodeToString(sum)
	if s.base64 {
		sig = base64.StdEncoding.EncodeToString(sum)
	}
	req.Header.Set(s.header, s.prefix+sig)
	if s.timestampHeader != "" {
		req.Header.Set(s.timestampHeader, ts)
	}
}

// hmac reads an hmac authentication; the schema has checked its fields
// one by one, this what they say together.
func (c *compiler) hmac(au Auth, secret string, now func() time.Time) authorizer {
	s := &signer{secret: []byte(secret), parts: au.Signed, separator: "\n", base64: au.Encoding == "base64",
		header: au.Header, prefix: au.Prefix, timestampHeader: au.TimestampHeader, now: now}
	if au.Separator != nil {
		s.separator = *au.Separator
	}
	signsTime := slices.Contains(au.Signed, "timestamp")
	switch {
	case signsTime && au.TimestampHeader == "":
		c.fail("/auth/signed", "the signature covers a timestamp, but no header says which it was", `add "timestamp_header", e.g. "X-Timestamp"`)
	case !signsTime && au.TimestampHeader != "":
		c.fail("/auth/timestamp_header", "a timestamp header, but the signature does not cover the timestamp", `add "timestamp" to "signed", or remove timestamp_header`)
	}
	if strings.EqualFold(au.Header, au.TimestampHeader) {
		c.fail("/auth/timestamp_header", "the timestamp would go in the signature's header", "name two different headers")
	}
	return s
}
