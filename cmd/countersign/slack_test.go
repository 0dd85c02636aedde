package main

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"countersign/internal/slowtest"
)

func TestSlackSettingsGoTogether(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string // "" means valid
	}{
		{map[string]string{}, ""},
		{map[string]string{"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", "SLACK_CHANNEL": "C1"}, ""},
		{map[string]string{"SLACK_BOT_TOKEN": "xoxb-1"}, "set all three or none"},
		{map[string]string{"SLACK_FAKE": "true"}, ""},
		{map[string]string{"SLACK_FAKE": "true", "DATABASE_URL": "postgres://x/y"}, "-slack-fake is for demo mode"},
		{map[string]string{"SLACK_INTERVAL": "0s"}, "-slack-interval"},
	} {
		_, err := parseConfig(nil, func(k string) string { return tc.env[k] })
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.env, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want %q", tc.env, err, tc.want)
		}
	}
	_, err := parseConfig(nil, func(k string) string {
		return map[string]string{"SLACK_BOT_TOKEN": "xoxb-secret-token", "SLACK_SIGNING_SECRET": "hush"}[k]
	})
	if err == nil || strings.Contains(err.Error(), "xoxb-secret-token") || strings.Contains(err.Error(), "hush") {
		t.Errorf("a partial Slack setting: %v (want an error that repeats no secret)", err)
	}
}

// TestDemoWithFakeSlack runs the demo as `SLACK_FAKE=true make run` does:
// it prints the fake Slack's address, whose channel soon shows the demo's
// cards; a click on Approve there as Sam (the demo agent, linked by e-mail)
// approves the card, and its message then says so.
func TestDemoWithFakeSlack(t *testing.T) {
	slowtest.Skip(t, "builds the console and starts it with the fake Slack")
	t.Parallel()
	bin := consoleBinary(t)
	dataDir := consoleDataDir(t)
	c := startConsole(t, bin, dataDir, "SLACK_FAKE=true")
	defer c.stop(t)
	var fake string
	for line := range c.lines {
		if _, rest, ok := strings.Cut(line, "Fake Slack: the approval cards are posted at "); ok {
			fake, _, _ = strings.Cut(rest, ";")
			break
		}
	}
	if !strings.HasPrefix(fake, "http://127.0.0.1:") {
		t.Fatalf("the console did not print the fake Slack's address (got %q)\n%s", fake, c.stderr.String())
	}
	page := func() string {
		t.Helper()
		res, err := http.Get(fake + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	tsOf := regexp.MustCompile(`name="ts" value="([^"]+)"`)
	var ts string
	for deadline := time.Now().Add(30 * time.Second); ts == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if m := tsOf.FindStringSubmatch(page()); m != nil {
			ts = m[1]
		}
	}
	if ts == "" {
		t.Fatalf("no card reached the fake Slack's channel:\n%s", page())
	}
	res, err := http.PostForm(fake+"/click", url.Values{"ts": {ts}, "user": {"U0SAM"}, "action": {"approve"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if p := page(); !strings.Contains(p, "Approved by <code>Sam Okafor</code> in Slack") {
		t.Errorf("after Sam's click the channel shows no approval:\n%s", p)
	}
}
