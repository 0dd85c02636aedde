// Command ssoprovider runs the test OpenID provider of internal/sso/ssotest
// on loopback, for trying the console's staff single sign-on by hand. It
// registers one client for the console and three people, each in a group,
// and prints the console flags to use. Never for production: its users and
// keys live in memory and every password is the same.
//
//	go run ./cmd/ssoprovider -addr 127.0.0.1:9998 -console http://127.0.0.1:8080
package main

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"countersign/internal/sso/localidp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9998", "address the provider listens on (its issuer is http://<addr>)")
	console := flag.String("console", "http://127.0.0.1:8080", "the console's -public-url; its callback is registered as the redirect URI")
	flag.Parse()
	op, err := localidp.Serve(*addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ssoprovider:", err)
		os.Exit(1)
	}
	defer op.Close()
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	client := localidp.Client{ID: localidp.DemoClientID, Secret: hex.EncodeToString(secret),
		RedirectURL: strings.TrimSuffix(*console, "/") + "/sign-in/sso/callback"}
	op.AddClient(client)
	op.AddDemoPeople()
	printout(os.Stdout, op.URL, client)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
}

func printout(w io.Writer, issuer string, c localidp.Client) {
	fmt.Fprintf(w, "Test OpenID provider at %s (in memory; for trying single sign-on, never for production)\n\n", issuer)
	fmt.Fprintf(w, "Start the console with:\n  OIDC_CLIENT_SECRET=%s countersign -oidc-issuer %s -oidc-client-id %s \\\n", c.Secret, issuer, c.ID)
	fmt.Fprintf(w, "    -oidc-group-roles %s -oidc-name \"Test provider\"\n\n", localidp.DemoGroupRoles)
	fmt.Fprintf(w, "People (password %q):\n", localidp.Password)
	for _, p := range localidp.DemoPeople {
		fmt.Fprintf(w, "  %-4s %-30s group %s\n", p.Username, p.Email, p.Group)
	}
}
