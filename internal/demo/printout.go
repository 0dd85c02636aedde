package demo

import (
	"fmt"
	"io"
)

// Printout is what the console prints when the demo is seeded: to stdout,
// not to the logs, since it holds passwords and a key.
type Printout struct {
	// CredentialsPath is the file that keeps the sign-ins and the key.
	CredentialsPath string
	Users           []User
	Assistant       Assistant
	// ShopURL is the demo shop, empty when none is connected.
	ShopURL string
	// SiteSecret is the demo shop's site secret (hex): what vouches for a
	// task's customer to the demo assistant.
	SiteSecret string
	// Customer is the demo customer the links are for.
	Customer string
	Links    []Link
	// Speakers are the customers whose shop record names another
	// language, each with the link of their waiting request.
	Speakers []Speaker
}

// Write prints the sign-ins, the assistant's key, the shop and the
// customer's confirmation links, for a console at consoleAddr
// ("host:port") that writes its customers' mails to mailDir.
func (p Printout) Write(w io.Writer, consoleAddr, mailDir string) {
	fmt.Fprintf(w, "\nCountersign demo: open http://%s and sign in as one of these (kept in %s):\n\n", consoleAddr, p.CredentialsPath)
	for _, u := range p.Users {
		fmt.Fprintf(w, "  %-9s %-34s %s\n", u.Role, u.Email, u.Password)
	}
	fmt.Fprintf(w, "\n  Demo assistant %q, API key %s\n"+
		"  A task's customer is vouched for by the shop's site, which signs assertions with the secret %s\n"+
		"  (try: go run ./cmd/assistant-sim -url http://%s -key %s -site-secret %s)\n",
		p.Assistant.Name, p.Assistant.Key, p.SiteSecret, consoleAddr, p.Assistant.Key, p.SiteSecret)
	if p.ShopURL != "" {
		fmt.Fprintf(w, "  The demo shop runs at %s\n", p.ShopURL)
	}
	if len(p.Links) > 0 {
		fmt.Fprintf(w, "\n  Confirmation links for %s. A link shows the request; to confirm, the customer proves who\n"+
			"  they are: sign in as the customer above, or open the \"Review and decide\" link of the request's\n"+
			"  mail, sent by itself when the request started waiting (\"E-mail me a link to decide\" sends another).\n"+
			"  The demo does not send mail: the mails, with the whole request and the link, are written as\n"+
			"  files to %s (the newest last)\n", p.Customer, mailDir)
		for _, l := range p.Links {
			fmt.Fprintf(w, "  %-28s http://%s%s\n", l.Action, consoleAddr, l.Path)
		}
	}
	if len(p.Speakers) > 0 {
		fmt.Fprintf(w, "  Customers in other languages: the shop's record of each names their language, so their pages\n"+
			"  and mails speak it (the switch on every page changes it). Their mails are in the same folder.\n")
		for _, s := range p.Speakers {
			fmt.Fprintf(w, "  %-16s %-27s %-8s %-24s http://%s%s\n", s.Name, s.Email, s.Language, s.Link.Action, consoleAddr, s.Link.Path)
		}
	}
	fmt.Fprintln(w)
}
