package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/fakeslack"
	"countersign/internal/slackbot"
	"countersign/store"
	"countersign/web/slackhook"
)

// slackOn reports whether the console posts its cards to Slack.
func (c config) slackOn() bool { return c.SlackToken != "" || c.SlackFake }

// validateSlack names what is wrong with the Slack settings.
func (c config) validateSlack() []string {
	var problems []string
	set := 0
	for _, v := range []string{c.SlackToken, c.SlackSecret, c.SlackChannel} {
		if v != "" {
			set++
		}
	}
	if set != 0 && set != 3 {
		problems = append(problems, "-slack-token, -slack-signing-secret and -slack-channel go together: set all three or none")
	}
	if c.SlackFake && set != 0 {
		problems = append(problems, "-slack-fake starts a fake Slack of its own: leave -slack-token, -slack-signing-secret and -slack-channel unset")
	}
	if c.SlackFake && !c.demo() {
		problems = append(problems, "-slack-fake is for demo mode (no -database-url): a real console talks to a real Slack")
	}
	if c.SlackEvery <= 0 {
		problems = append(problems, "-slack-interval: want a positive duration like 2s")
	}
	return problems
}

// startSlack builds the Slack bot from the configuration, or nil when Slack
// is off. With -slack-fake it first starts the fake Slack on loopback, with
// a Slack user for the demo agent (linked by its confirmed e-mail address)
// and one without an account (linked by a code), and prints where its page
// is; the demo's admin turns on linking by e-mail address.
func (c config) startSlack(ctx context.Context, cp *controlplane.Service, st *store.Store, acc *accounts.Service, log *slog.Logger, out io.Writer) (*slackbot.Bot, error) {
	if !c.slackOn() {
		return nil, nil
	}
	cfg := slackbot.Config{Token: c.SlackToken, SigningSecret: c.SlackSecret, Channel: c.SlackChannel, APIURL: c.SlackAPIURL,
		BaseURL: c.publicBase()}
	if c.SlackFake {
		fake := fakeslack.New("xoxb-demo-"+randomHex(8), randomHex(16))
		fake.InteractionsURL = "http://" + c.Addr + slackhook.InteractionsPath
		fake.AddUser(fakeslack.User{ID: "U0SAM", Name: "Sam Okafor", Email: "agent@demo.countersign.test", EmailConfirmed: true})
		fake.AddUser(fakeslack.User{ID: "U0KIM", Name: "Kim (no console account yet)"})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("fake Slack: %w", err)
		}
		srv := &http.Server{Handler: fake.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Warn("fake Slack stopped", "error", err)
			}
		}()
		go func() {
			<-ctx.Done()
			_ = srv.Close()
		}()
		base := "http://" + ln.Addr().String()
		cfg.Token, cfg.SigningSecret, cfg.Channel, cfg.APIURL = fake.Token, fake.Secret, "#approvals", base+"/api/"
		// The demo's admin turns on linking by e-mail address, so Sam is
		// linked to the demo agent at his first click.
		bot := slackbot.New(cfg, cp, st, acc, time.Now, log)
		if id, err := acc.UserIDByEmail(ctx, "admin@demo.countersign.test"); err == nil {
			if admin, err := acc.User(ctx, id); err == nil {
				if err := bot.SetEmailMatch(ctx, admin, true); err != nil {
					return nil, err
				}
			}
		}
		fmt.Fprintf(out, "  Fake Slack: the approval cards are posted at %s; click Approve or Reject there as a Slack user\n"+
			"  (Sam decides as the demo agent, matched by e-mail; Kim is sent a code to enter at %s%s).\n\n",
			base, c.publicBase(), slackbot.LinkPage)
		return bot, nil
	}
	return slackbot.New(cfg, cp, st, acc, time.Now, log), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
