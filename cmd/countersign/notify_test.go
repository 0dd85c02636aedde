package main

import (
	"strings"
	"testing"
)

func TestNotificationSettingsAreCheckedAtStart(t *testing.T) {
	env := map[string]string{"SMTP_ADDR": "mail.example.test", "NOTIFY_TO": "a@example.test", "NOTIFY_WEBHOOK_URL": "hooks.example.test/x",
		"PUBLIC_URL": "console.example.test", "NOTIFY_INTERVAL": "never", "SMTP_PASSWORD": "hunter2-secret"}
	_, err := parseConfig(nil, func(k string) string { return env[k] })
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"-smtp-addr", "-notify-from", "-notify-webhook", "-public-url", "-notify-interval"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error repeats a secret: %v", err)
	}
	ok := map[string]string{"SMTP_ADDR": "mail.example.test:587", "NOTIFY_FROM": "cs@example.test", "NOTIFY_TO": "a@example.test, b@example.test",
		"NOTIFY_WEBHOOK_URL": "https://hooks.example.test/x", "PUBLIC_URL": "https://console.example.test"}
	c, err := parseConfig(nil, func(k string) string { return ok[k] })
	if err != nil {
		t.Fatal(err)
	}
	if n := c.notifier(nil, nil); !n.Enabled() {
		t.Error("a configured webhook and mail server leave notifications off")
	}
}
