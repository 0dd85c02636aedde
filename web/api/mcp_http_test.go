package api

import "testing"

// TestOriginAllowed: a configured origin is allowed from any host; a page
// is allowed on its own server only when that is addressed by an IP
// literal or localhost (a name may have been rebound); anything else, and
// an opaque or malformed origin, is refused.
func TestOriginAllowed(t *testing.T) {
	h := &Handler{cfg: Config{AllowedOrigins: []string{"https://app.example.com", "http://console.internal:8080/"}}}
	for _, c := range []struct {
		origin, host string
		want         bool
	}{
		{"https://app.example.com", "console.example.com", true},
		{"https://APP.example.com", "console.example.com", true},
		{"http://console.internal:8080", "console.internal:8080", true},
		{"http://app.example.com", "console.example.com", false}, // another scheme
		{"https://app.example.com:444", "console.example.com", false},
		{"http://127.0.0.1:8080", "127.0.0.1:8080", true},
		{"http://[::1]:8080", "[::1]:8080", true},
		{"http://localhost:8080", "localhost:8080", true},
		{"http://127.0.0.1:8080", "127.0.0.1:9090", false},
		{"http://rebind.example:8080", "rebind.example:8080", false},
		{"https://evil.example", "127.0.0.1:8080", false},
		{"null", "127.0.0.1:8080", false},
		{"file://", "127.0.0.1:8080", false},
		{"::", "127.0.0.1:8080", false},
	} {
		if got := h.originAllowed(c.origin, c.host); got != c.want {
			t.Errorf("originAllowed(%q, %q) = %v, want %v", c.origin, c.host, got, c.want)
		}
	}
}
