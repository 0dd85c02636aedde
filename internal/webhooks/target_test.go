package webhooks_test

import (
	"context"
	"strings"
	"testing"

	"countersign/internal/webhooks"
	"countersign/store"
)

// TestRegisterChecksTheURL: in production an endpoint is an https address
// whose host is not this machine nor a non-public IP address; demo mode
// (AllowPrivate) also takes loopback and http://localhost.
func TestRegisterChecksTheURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		url              string
		production, demo bool
	}{
		{"https://assistant.example.com/hooks/countersign", true, true},
		{"https://93.184.216.34/hooks", true, true},
		{"https://[2606:4700::1111]/hooks", true, true},
		{"https://169.254.169.254/latest/meta-data/", false, true},
		{"https://10.0.0.1:5432/", false, true},
		{"https://172.16.0.1/", false, true},
		{"https://192.168.1.10/", false, true},
		{"https://100.64.0.1/", false, true},
		{"https://0.0.0.0/", false, true},
		{"https://224.0.0.1/", false, true},
		{"https://127.0.0.1:8089/outcomes", false, true},
		{"https://[::1]:8089/outcomes", false, true},
		{"https://[fd00::1]/", false, true},
		{"https://[fe80::1]/", false, true},
		{"https://[::ffff:127.0.0.1]/", false, true},
		{"https://[64:ff9b::a00:1]/", false, true},
		{"https://localhost/", false, true},
		{"https://hooks.localhost./", false, true},
		{"http://localhost:8089/outcomes", false, true},
		{"http://127.0.0.1:8089/outcomes", false, true},
		{"http://[::1]:8089/outcomes", false, true},
		{"http://assistant.example.com/outcomes", false, false},
		{"http://10.0.0.5/outcomes", false, false},
		{"ftp://assistant.example.com/", false, false},
		{"https://user:pass@assistant.example.com/", false, false},
		{"assistant.example.com/outcomes", false, false},
		{"", false, false},
		{"https://", false, false},
	}
	for _, tc := range cases {
		for _, mode := range []struct {
			cfg  webhooks.Config
			ok   bool
			name string
		}{{webhooks.Config{}, tc.production, "production"}, {webhooks.Config{AllowPrivate: true}, tc.demo, "demo"}} {
			_, err := mode.cfg.CheckURL(tc.url)
			if (err == nil) != mode.ok {
				t.Errorf("%s: CheckURL(%q) = %v, want ok=%v", mode.name, tc.url, err, mode.ok)
			}
		}
	}
}

// TestDeliveryConnectsOnlyToPublicAddresses registers endpoints the way a
// demo console (or an earlier DNS answer) let through — a name that
// resolves to loopback, a loopback address, the metadata address, plain
// http — and
// delivers with a production worker: each connection is refused after
// resolution, nothing arrives, and the attempt says why. A demo worker
// delivers to the same loopback receiver.
func TestDeliveryConnectsOnlyToPublicAddresses(t *testing.T) {
	t.Parallel()
	render := func(_ context.Context, id string) (any, error) { return map[string]string{"id": id}, nil }
	for _, tc := range []struct {
		name, url, refused string
	}{
		{"a name resolving to loopback", "https://localhost:{port}/outcomes", "loopback"},
		{"a loopback address", "https://127.0.0.1:{port}/outcomes", "refused to connect to 127.0.0.1"},
		{"plain http", "http://127.0.0.1:{port}/outcomes", "not an https:// address"},
		{"the metadata address", "https://169.254.169.254/latest/meta-data/", "refused to connect to 169.254.169.254"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			port := b.recvURL[strings.LastIndex(b.recvURL, ":")+1:]
			_, secret, err := b.svc.Register(b.ctx, "ast_hook", nil, strings.ReplaceAll(tc.url, "{port}", port))
			if err != nil {
				t.Fatal(err)
			}
			b.recv.mu.Lock()
			b.recv.secret = secret
			b.recv.mu.Unlock()
			b.invocation(t, "tsk_hook", "inv_a")
			b.event(t, "tsk_hook", "inv_a", "invocation.completed")

			production := webhooks.NewWorker(store.New(b.openPool(t)), render, webhooks.Config{}, b.clock.Now, nil)
			n, err := production.Enqueue(b.ctx)
			mustN(t, "enqueued", n, err, 1)
			n, err = production.DeliverDue(b.ctx)
			mustN(t, "attempts", n, err, 1)
			if got := b.recv.all(); len(got) != 0 {
				t.Errorf("a production worker reached a non-public address: %d posts", len(got))
			}
			d := b.deliveries(t)
			if len(d) != 1 || len(d[0].Attempts) != 1 || d[0].Attempts[0].Status != 0 || !strings.Contains(d[0].Attempts[0].Error, tc.refused) {
				t.Fatalf("deliveries %+v, want one attempt refused (%q)", d, tc.refused)
			}
			if strings.HasPrefix(tc.url, "http://") {
				b.clock.Advance(webhooks.Backoff(1))
				n, err = b.worker(t).DeliverDue(b.ctx)
				mustN(t, "demo attempts", n, err, 1)
				if got := b.recv.all(); len(got) != 1 || got[0].sigErr != nil {
					t.Errorf("a demo worker's delivery: %+v", got)
				}
			}
		})
	}
}
