package main

import (
	"strings"
	"testing"
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
