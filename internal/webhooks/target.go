package webhooks

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"countersign/internal/apperr"
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

// blockedPrefixes are the IPv4 and IPv6 ranges no production delivery may
// connect to besides what netip's predicates cover (loopback, private,
// link-local, multicast, unspecified): "this network", carrier-grade NAT
// (where some clouds keep their metadata service), IETF protocol
// assignments, benchmarking, reserved and broadcast, and NAT64 (checked by
// the IPv4 address it embeds).
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
}

var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// publicAddr says why ip is not a public unicast address, or "" when it is.
func publicAddr(ip netip.Addr) string {
	ip = ip.Unmap()
	if nat64.Contains(ip) {
		b := ip.As16()
		return publicAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "a link-local address (where cloud metadata services answer)"
	case ip.IsUnspecified(), ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "not a unicast address"
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return "a reserved or shared address"
		}
	}
	return ""
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
		if !loopback(host) {
			return invalid("Use https; http is allowed only for localhost, in demo mode.")
		}
	default:
		return invalid("Use an https:// address.")
	}
	if c.AllowPrivate {
		return u.String(), nil
	}
	if loopback(host) {
		return invalid("Use the assistant's public address: this one is the console's own machine.")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := publicAddr(ip); why != "" {
			return invalid(fmt.Sprintf("Use a public address: %s is %s.", host, why))
		}
	}
	return u.String(), nil
}

// loopback says whether host names this machine.
func loopback(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// client is the HTTP client deliveries are sent with: a 10 second timeout,
// no redirects (one would send the signed body somewhere nobody
// registered), no proxy from the environment (the address connected to is
// the endpoint's), and, outside AllowPrivate, a dialer that refuses every
// connection to a non-public address after the name was resolved, so a
// name that resolves to an internal address at delivery time (DNS
// rebinding) reaches nothing.
func (c Config) client() *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !c.AllowPrivate {
		dialer.Control = refusePrivate
	}
	return &http.Client{Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{Proxy: nil, DialContext: dialer.DialContext, ForceAttemptHTTP2: true,
			MaxIdleConns: 20, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 5 * time.Second}}
}

// refusePrivate is a net.Dialer Control: it runs for every address a
// connection is attempted to, after resolution, and refuses a non-public
// one.
func refusePrivate(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhooks: refused to connect to %s: not an IP address", address)
	}
	if why := publicAddr(ap.Addr()); why != "" {
		return fmt.Errorf("webhooks: refused to connect to %s: %s", ap.Addr(), why)
	}
	return nil
}
