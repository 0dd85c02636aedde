package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"

	"countersign/internal/sso"
	"countersign/internal/sso/localidp"
)

// defaultDemoProvider is where -oidc-demo's provider listens. A fixed
// port keeps its issuer, and with it the accounts its people signed in
// to, the same across restarts of the demo.
const defaultDemoProvider = "127.0.0.1:9998"

// demoSSOFlags adds -oidc-demo and -oidc-demo-addr to fs.
func (c *config) demoSSOFlags(fs *flag.FlagSet, getenv func(string) string) {
	fs.BoolVar(&c.OIDCDemo, "oidc-demo", getenv("OIDC_DEMO") == "true",
		"demo mode: start the test OpenID provider in-process, sign staff in through it and print its people (env OIDC_DEMO)")
	addr := defaultDemoProvider
	if v := getenv("OIDC_DEMO_ADDR"); v != "" {
		addr = v
	}
	fs.StringVar(&c.OIDCDemoAddr, "oidc-demo-addr", addr, "loopback host:port the -oidc-demo provider listens on (env OIDC_DEMO_ADDR)")
}

// validateDemoSSO names what stops -oidc-demo, with its fix.
func (c config) validateDemoSSO() []string {
	var problems []string
	if !c.demo() {
		problems = append(problems, "-oidc-demo is for demo mode (no -database-url): point a real console at a real provider with -oidc-issuer")
	}
	if c.OIDCIssuer != "" || c.OIDCClientID != "" || c.OIDCClientSecret != "" || c.OIDCGroupRoles != "" {
		problems = append(problems, "-oidc-demo starts a provider of its own: leave -oidc-issuer, -oidc-client-id, -oidc-client-secret and -oidc-group-roles unset")
	}
	host, _, err := net.SplitHostPort(c.OIDCDemoAddr)
	if ip, perr := netip.ParseAddr(host); err != nil || perr != nil || !ip.IsLoopback() {
		problems = append(problems, fmt.Sprintf("-oidc-demo-addr %q: want a loopback host:port, e.g. %s", c.OIDCDemoAddr, defaultDemoProvider))
	}
	return problems
}

// startDemoSSO starts the test OpenID provider of -oidc-demo on loopback
// until ctx ends, registers the console as its client and its demo people,
// prints them to out, and returns the configuration pointed at it. Never
// for production: the provider keeps everything in memory and every
// password is the same.
func (c config) startDemoSSO(ctx context.Context, out io.Writer) (config, error) {
	op, err := localidp.Serve(c.OIDCDemoAddr)
	if err != nil {
		return c, fmt.Errorf("-oidc-demo: the test provider cannot listen on %s (%w): stop what uses it, or pick another port with -oidc-demo-addr", c.OIDCDemoAddr, err)
	}
	go func() {
		<-ctx.Done()
		op.Close()
	}()
	client := localidp.Client{ID: localidp.DemoClientID, Secret: randomHex(16),
		RedirectURL: strings.TrimSuffix(c.publicBase(), "/") + ssoCallbackPath}
	op.AddClient(client)
	op.AddDemoPeople()
	c.OIDCIssuer, c.OIDCClientID, c.OIDCClientSecret, c.OIDCGroupRoles = op.URL, client.ID, client.Secret, localidp.DemoGroupRoles
	if c.OIDCName == "" {
		c.OIDCName = "Test provider"
	}
	roles, err := sso.ParseGroupRoles(c.OIDCGroupRoles)
	if err != nil {
		return c, err
	}
	fmt.Fprintf(out, "  Single sign-on: the test OpenID provider runs at %s (in memory, for the demo only).\n"+
		"  \"Sign in with %s\" on the sign-in page signs these people in there, each with the password %q:\n",
		op.URL, c.OIDCName, localidp.Password)
	for _, p := range localidp.DemoPeople {
		fmt.Fprintf(out, "    %-4s %-30s group %-8s → %s\n", p.Username, p.Email, p.Group, roles[p.Group])
	}
	fmt.Fprintln(out)
	return c, nil
}
