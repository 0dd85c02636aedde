// Package safehttp is the HTTP client for every address the console is
// told to call by someone else — an assistant's outcome webhook, a
// business's logo — as opposed to the business systems an operator
// connected. Such an address can point at the console's own network: the
// client connects only to public addresses, checked on the address each
// connection is actually made to (after the name was resolved, so a name
// that resolves to an internal address when called — DNS rebinding —
// reaches nothing), speaks https only, follows no redirect, takes no proxy
// from the environment and gives up after a time limit.
package safehttp

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Options say how far a client may reach. The zero value is for
// production.
type Options struct {
	// Timeout bounds a whole request, reading its body included (0: 10
	// seconds).
	Timeout time.Duration
	// AllowPrivate lets connections reach loopback, private, link-local
	// and other non-public addresses, and http:// for any of them: the
	// outcome webhooks of demo mode, whose scripted assistant listens on
	// 127.0.0.1. Never set it where an admin's typo or a hostile DNS answer
	// could point a call at the console's own network.
	AllowPrivate bool
	// Test, set by tests and never from a flag or the environment, lets
	// the client reach a test's own TLS server on loopback while every
	// other address is refused as in production.
	Test *TestAllowance
}

// TestAllowance is what a test lets a production client reach: exactly
// the listed addresses, trusting the listed certificates.
type TestAllowance struct {
	// Addrs are the "ip:port" addresses the client may connect to though
	// they are not public: httptest servers' listeners.
	Addrs []string
	// RootCAs, when set, are the only certificates trusted (an httptest
	// TLS server's).
	RootCAs *x509.CertPool
}

// NewClient is a client that reaches only what o allows. A redirect is
// not followed: the client returns the 3xx answer (Redirect names where it
// pointed). A request to a refused address or scheme fails with an error
// that wraps a *RefusedError saying which address and why.
func NewClient(o Options) *http.Client {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	dialer := &net.Dialer{Timeout: min(timeout, 5*time.Second), KeepAlive: 30 * time.Second}
	if !o.AllowPrivate {
		var allowed []string
		if o.Test != nil {
			allowed = o.Test.Addrs
		}
		dialer.Control = func(_, address string, _ syscall.RawConn) error { return refuse(address, allowed) }
	}
	tr := &http.Transport{Proxy: nil, DialContext: dialer.DialContext, ForceAttemptHTTP2: true,
		MaxIdleConns: 20, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: min(timeout, 5*time.Second),
		ResponseHeaderTimeout: timeout}
	if o.Test != nil && o.Test.RootCAs != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: o.Test.RootCAs, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     httpsOnly{tr, o.AllowPrivate}}
}

// httpsOnly refuses a request that is not https unless private addresses
// are allowed: a page served over https must not depend on a plain-text
// answer anyone on the path can change.
type httpsOnly struct {
	next         http.RoundTripper
	allowPrivate bool
}

func (t httpsOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" && !t.allowPrivate {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, &RefusedError{Addr: r.URL.Redacted(), Reason: NotHTTPS}
	}
	return t.next.RoundTrip(r)
}

// Reason is why the client refused an address, in the words a log line
// or a webhook attempt shows after the address.
type Reason string

// The reasons a client refuses an address.
const (
	// NotHTTPS: the request's URL is not https:// (and private addresses
	// are not allowed), refused before any connection.
	NotHTTPS Reason = "not an https:// address"
	// NotAnIP: the address a connection was attempted to is not an IP
	// address and port, so it cannot be checked.
	NotAnIP Reason = "not an IP address"
	// LoopbackAddr: the connection would reach this machine.
	LoopbackAddr Reason = "a loopback address"
	// PrivateAddr: the connection would reach a private network (RFC 1918,
	// unique local IPv6).
	PrivateAddr Reason = "a private address"
	// LinkLocalAddr: the connection would reach the local link, where cloud
	// metadata services answer.
	LinkLocalAddr Reason = "a link-local address (where cloud metadata services answer)"
	// NotUnicast: the address is unspecified or multicast, nobody's own.
	NotUnicast Reason = "not a unicast address"
	// ReservedAddr: the address is in a reserved or shared range (carrier-
	// grade NAT, benchmarking, broadcast and the like).
	ReservedAddr Reason = "a reserved or shared address"
)

// RefusedError is the error a client's request fails with, wrapped by
// net/http, when it refused to send it: find it with errors.As and switch
// on Reason. Its message is the one logs and webhook attempts have always
// shown.
type RefusedError struct {
	// Addr is the IP address a connection was refused to, or for NotHTTPS
	// the request's URL with any password redacted (for NotAnIP, the
	// address as the dialer gave it).
	Addr string
	// Reason is why.
	Reason Reason
}

// Error says which address was refused and why.
func (e *RefusedError) Error() string {
	if e.Reason == NotHTTPS {
		return fmt.Sprintf("safehttp: refused %s: %s", e.Addr, e.Reason)
	}
	return fmt.Sprintf("safehttp: refused to connect to %s: %s", e.Addr, e.Reason)
}

// Redirect says where res, a 3xx answer the client did not follow,
// pointed, or "" when it is no redirect.
func Redirect(res *http.Response) string {
	if res.StatusCode < 300 || res.StatusCode > 399 {
		return ""
	}
	return res.Header.Get("Location")
}

// refuse is a net.Dialer Control: it runs for every address a connection
// is attempted to, after resolution, and refuses a non-public one that is
// not among allowed.
func refuse(address string, allowed []string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &RefusedError{Addr: address, Reason: NotAnIP}
	}
	if slices.Contains(allowed, address) {
		return nil
	}
	if why := PublicAddr(ap.Addr()); why != "" {
		return &RefusedError{Addr: ap.Addr().String(), Reason: why}
	}
	return nil
}

// blockedPrefixes are the IPv4 ranges no production call may connect to
// besides what netip's predicates cover (loopback, private, link-local,
// multicast, unspecified): "this network", carrier-grade NAT (where some
// clouds keep their metadata service), IETF protocol assignments,
// benchmarking, reserved and broadcast.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
}

// nat64 is checked by the IPv4 address it embeds.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// PublicAddr says why ip is not a public unicast address, or "" when it
// is.
func PublicAddr(ip netip.Addr) Reason {
	ip = ip.Unmap()
	if nat64.Contains(ip) {
		b := ip.As16()
		return PublicAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	switch {
	case ip.IsLoopback():
		return LoopbackAddr
	case ip.IsPrivate():
		return PrivateAddr
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return LinkLocalAddr
	case ip.IsUnspecified(), ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return NotUnicast
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return ReservedAddr
		}
	}
	return ""
}

// Loopback says whether host names this machine: localhost, a name under
// .localhost, or a loopback IP address.
func Loopback(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
