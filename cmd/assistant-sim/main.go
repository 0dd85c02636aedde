// Command assistant-sim plays scripted conversations against a Countersign
// console's JSON API, as an assistant would, and prints the transcript.
//
//	go run ./cmd/assistant-sim -url http://127.0.0.1:8080 -key csk_live_… -conversations 10
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"countersign/internal/assistantsim"
)

func main() {
	url := flag.String("url", envOr("COUNTERSIGN_URL", "http://127.0.0.1:8080"), "the console's address (COUNTERSIGN_URL)")
	key := flag.String("key", os.Getenv("COUNTERSIGN_API_KEY"), "the assistant's API key (COUNTERSIGN_API_KEY)")
	customer := flag.String("customer", "customer@demo.countersign.test", "the customer the conversations are with")
	n := flag.Int("conversations", 0, "how many conversations to play (0: each script once)")
	flag.Parse()
	if *key == "" {
		fmt.Fprintln(os.Stderr, "assistant-sim: -key (or COUNTERSIGN_API_KEY) is required; see the assistant line of .data/demo-credentials")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	t, err := assistantsim.Run(ctx, *url, *key, assistantsim.Options{Customer: *customer, Conversations: *n})
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
