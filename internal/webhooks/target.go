package webhooks

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/safehttp"
)

// Config says where endpoints may be, and how deliveries are signed. The
// zero value is for production: an endpoint is an https address on the
// public internet, checked when it is registered and again on every
// connection a delivery makes, and deliveries carry the Standard Webhooks
// signature alone.
type Config struct {
	// AllowPrivate lets endpoints be on loopback, private, link-local and
	// other non-public addresses, and http:// for a loopback host. Demo
	// mode sets it (the scripted assistant listens on 127.0.0.1), and so do
	// tests, whose receivers are httptest servers. Never set it where an
	// admin's typo or a hostile DNS answer could point deliveries at the
	// console's own network: a delivery is a signed POST from inside it.
	AllowPrivate bool
	// LegacySignature also signs every delivery the way Countersign did
	// before it followed Standard Webhooks: Countersign-Signature:
	// t=<unix>,v1=<hex HMAC-SHA256 keyed with the whole secret, of
	// "<t>.<body>">. For receivers written against that scheme (Verify);
	// off by default.
	LegacySignature bool
}

// CheckURL validates an endpoint's address and returns it trimmed; the
// error is Invalid naming the field "url". Outside AllowPrivate the address
// is https, and its host is neither a name for this machine (localhost)
// nor a non-public IP address. A name is not resolved here: whatever it
// resolves to, each delivery checks the address it actually connects to.
func (c Config) CheckURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	invalid := func(msg string) (string, error) {
		return "", apperr.InvalidFields(map[string]string{"url": msg})
	}
	if raw == "" {
		return invalid("Give the address Countersign should POST outcomes to.")
	}
	if len(raw) > 2000 {
		return invalid("Use an address of at most 2000 characters.")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return invalid("Use a full address, e.g. https://assistant.example.com/countersign/outcomes.")
	}
	if u.User != nil {
		return invalid("Leave credentials out of the address; deliveries are signed instead.")
	}
	if u.Fragment != "" {
		return invalid("Leave the #fragment out of the address.")
	}
	host := u.Hostname()
	switch u.Scheme {
	case "https":
	case "http":
		if !c.AllowPrivate {
			return invalid("Use an https:// address.")
		}
		if !safehttp.Loopback(host) {
			return invalid("Use https; http is allowed only for localhost, in demo mode.")
		}
	default:
		return invalid("Use an https:// address.")
	}
	if c.AllowPrivate {
		return u.String(), nil
	}
	if safehttp.Loopback(host) {
		return invalid("Use the assistant's public address: this one is the console's own machine.")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := safehttp.PublicAddr(ip); why != "" {
			return invalid(fmt.Sprintf("Use a public address: %s is %s.", host, why))
		}
	}
	return u.String(), nil
}

// client is the HTTP client deliveries are sent with (safehttp): a 10
// second timeout, no redirects (one would send the signed body somewhere
// nobody registered), no proxy from the environment, and, outside
// AllowPrivate, https only to public addresses, checked on each
// connection after the name was resolved.
func (c Config) client() *http.Client {
	return safehttp.NewClient(safehttp.Options{Timeout: 10 * time.Second, AllowPrivate: c.AllowPrivate})
}
