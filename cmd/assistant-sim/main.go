// Command assistant-sim plays scripted conversations against a Countersign
// console's JSON API, as an assistant would, and prints the transcript.
//
//	go run ./cmd/assistant-sim -url http://127.0.0.1:8080 -key csk_live_… -site-secret <hex> -conversations 10
//
// With -site-secret it also plays the business's site, signing the task
// assertion that vouches for the customer of each task it opens; without
// it, the assistant must be allowed to act for any customer.
//
// With -webhook-listen and -webhook-secret it runs an outcome-webhook
// receiver (register http://<addr>/ for the assistant on /admin/assistants)
// and waits there for its writes' outcomes instead of polling them.
package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"countersign/internal/assistantsim"
)

func main() {
	url := flag.String("url", envOr("COUNTERSIGN_URL", "http://127.0.0.1:8080"), "the console's address (COUNTERSIGN_URL)")
	key := flag.String("key", os.Getenv("COUNTERSIGN_API_KEY"), "the assistant's API key (COUNTERSIGN_API_KEY)")
	customer := flag.String("customer", "customer@demo.countersign.test", "the customer the conversations are with")
	n := flag.Int("conversations", 0, "how many conversations to play (0: each script once)")
	listen := flag.String("webhook-listen", "", "receive outcome webhooks on this address (e.g. 127.0.0.1:8089) instead of polling")
	secret := flag.String("webhook-secret", os.Getenv("COUNTERSIGN_WEBHOOK_SECRET"), "the endpoint's signing secret, shown once on /admin/assistants (COUNTERSIGN_WEBHOOK_SECRET)")
	site := flag.String("site-secret", os.Getenv("COUNTERSIGN_SITE_SECRET"), "play the business's site too: the hex secret it signs task assertions with, the \"site shop\" line of .data/demo-credentials (COUNTERSIGN_SITE_SECRET)")
	system := flag.String("site-system", "shop", "the system whose site signs the task assertions")
	assistant := flag.String("assistant", "demo-assistant", "the assistant's id or name, which the task assertions name")
	flag.Parse()
	if *key == "" {
		fmt.Fprintln(os.Stderr, "assistant-sim: -key (or COUNTERSIGN_API_KEY) is required; see the assistant line of .data/demo-credentials")
		os.Exit(2)
	}
	if *listen != "" && *secret == "" {
		fmt.Fprintln(os.Stderr, "assistant-sim: -webhook-listen needs -webhook-secret (or COUNTERSIGN_WEBHOOK_SECRET)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	siteKey, err := hex.DecodeString(*site)
	if err != nil {
		fmt.Fprintln(os.Stderr, "assistant-sim: -site-secret must be hex")
		os.Exit(2)
	}
	opts := assistantsim.Options{Customer: *customer, Conversations: *n, SiteSecret: siteKey, SiteSystem: *system, Assistant: *assistant}
	if *listen != "" {
		opts.Outcomes = assistantsim.NewOutcomes(*secret, nil)
		ln, err := net.Listen("tcp", *listen)
		if err != nil {
			fmt.Fprintln(os.Stderr, "assistant-sim:", err)
			os.Exit(1)
		}
		srv := &http.Server{Handler: opts.Outcomes, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				fmt.Fprintln(os.Stderr, "assistant-sim: outcome webhooks:", err)
			}
		}()
		defer srv.Close()
		fmt.Fprintf(os.Stderr, "assistant-sim: receiving outcome webhooks at http://%s/\n", ln.Addr())
	}
	t, err := assistantsim.Run(ctx, *url, *key, opts)
	t.Write(os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
