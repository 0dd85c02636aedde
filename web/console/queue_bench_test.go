package console_test

import (
	"context"

	"countersign/web/webtest"

	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/store"
	"countersign/store/dbtest"
)

// BenchmarkQueuePageP95 measures the approval queue page's 95th-percentile
// response time (real HTTP, real PostgreSQL) with 1,000 pending approvals
// as the baseline and again with 100,000, for three shapes: the first page,
// a page deep in the queue (keyset cursor) and a filtered page. It prints
// the ratio of each p95 to its baseline. Run it once:
//
//	go test ./web/ -run '^$' -bench QueuePageP95 -benchtime 1x
func BenchmarkQueuePageP95(b *testing.B) {
	ctx := context.Background()
	// The stack's clock stands still at 2026-04-01 09:00 UTC: now.
	stack := webtest.Assemble(b, store.New(dbtest.New(b)), webtest.WithOfflineShop())
	st, srv, now := stack.Store, stack.Server, stack.Now()
	u, err := stack.Accounts.Create(ctx, accounts.NewUser{Email: "bench-agent@example.test", Name: "Bench Agent", Role: accounts.Agent, Password: "a long enough password"})
	if err != nil {
		b.Fatal(err)
	}
	hc := benchSignIn(b, srv.URL, u.Email, "a long enough password")

	pool := st.Pool()
	fill := func(from, to int) {
		b.Helper()
		_, err := pool.Exec(ctx, `
			INSERT INTO tasks (id, customer_ref, conversation_id, allowed_actions, write_budget, inflight_limit, rate_per_minute,
				expires_at, state, created_at, updated_at)
			SELECT 'tsk_b' || g, 'customer' || (g % 5000) || '@example.test', 'conv-' || g, '{issue_refund}', 10, 2, 60,
				$3::timestamptz + interval '30 days', 'active', $3, $3
			FROM generate_series($1::int, $2::int) g WHERE g % 10 = 0 OR g = $1`, from, to, now)
		if err != nil {
			b.Fatal(err)
		}
		_, err = pool.Exec(ctx, `
			INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id, target_display, state,
				proposed_args, args_hash, quote, idempotency_key, amount_cents, policy_stage, policy_version, deadline_at,
				created_at, updated_at)
			SELECT 'inv_b' || g, 'tsk_b' || CASE WHEN g % 10 = 0 OR g = $1 THEN g ELSE greatest($1, g - g % 10) END,
				'conv-' || g, 'shop', CASE WHEN g % 3 = 0 THEN 'cancel_subscription' ELSE 'issue_refund' END, 'order', 'ord_' || g,
				'Order #' || g, 'awaiting_approval',
				jsonb_build_object('order_id', 'ord_' || g, 'amount_cents', 100 + g % 50000, 'reason_code', 'damaged'), '\x00',
				jsonb_build_object('title', 'Refund $' || ((100 + g % 50000) / 100) || ' on order #' || g,
					'lines', jsonb_build_array(jsonb_build_object('label', 'Refund', 'to', '$1.00', 'emphasis', true)),
					'consequences', jsonb_build_array('The money goes back to the card used.'), 'amount_cents', 100 + g % 50000,
					'currency', 'usd', 'confirm_label', 'Refund', 'decline_label', 'Keep'),
				'key-b' || g, 100 + g % 50000, 3, 1, $3::timestamptz + (g % 86400) * interval '1 second',
				$3::timestamptz - (g % 7200) * interval '1 second', $3
			FROM generate_series($1::int, $2::int) g`, from, to, now)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `ANALYZE invocations; ANALYZE tasks`); err != nil {
			b.Fatal(err)
		}
	}
	shapes := []struct{ name, path string }{
		{"first page", "/queue"},
		{"deep page", ""}, // found by following next links
		{"filtered", "/queue?action=issue_refund&min=100&max=300&age=15m"},
	}
	measure := func(label string) map[string]time.Duration {
		b.Helper()
		deep := benchFollow(b, hc, srv.URL+"/queue", 8)
		out := map[string]time.Duration{}
		for _, sh := range shapes {
			path := sh.path
			if path == "" {
				path = deep
			}
			var samples []time.Duration
			for i := 0; i < 200; i++ {
				start := time.Now()
				res, err := hc.Get(srv.URL + path)
				if err != nil {
					b.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Fatalf("%s %s: %d", label, path, res.StatusCode)
				}
				samples = append(samples, time.Since(start))
			}
			slices.Sort(samples)
			out[sh.name] = samples[len(samples)*95/100]
		}
		return out
	}
	fill(1, 1000)
	base := measure("1,000 pending")
	fill(1001, 100000)
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM invocations WHERE state = 'awaiting_approval'`).Scan(&n); err != nil || n != 100000 {
		b.Fatalf("%d pending rows (%v), want 100000", n, err)
	}
	big := measure("100,000 pending")
	for _, sh := range shapes {
		ratio := float64(big[sh.name]) / float64(base[sh.name])
		b.Logf("queue %-10s p95: %8.2f ms with 1,000 pending, %8.2f ms with 100,000 pending (ratio %.2f)",
			sh.name, ms(base[sh.name]), ms(big[sh.name]), ratio)
		key := strings.ReplaceAll(sh.name, " ", "-")
		b.ReportMetric(ms(big[sh.name]), "p95-ms-100k-"+key)
		b.ReportMetric(ratio, "ratio-"+key)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// benchSignIn returns an HTTP client signed in through the real form.
func benchSignIn(b *testing.B, base, email, password string) *http.Client {
	b.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	res, err := hc.Get(base + "/sign-in")
	if err != nil {
		b.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(res.Body)
	res.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	tok, _ := doc.Find(`input[name="_csrf"]`).Attr("value")
	req, _ := http.NewRequest(http.MethodPost, base+"/sign-in", strings.NewReader(url.Values{"_csrf": {tok}, "email": {email}, "password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err = hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	if res.Request.URL.Path == "/sign-in" {
		b.Fatalf("bench sign-in failed")
	}
	return hc
}

// benchFollow follows the queue's next-page links pages times and returns
// the path of the page reached.
func benchFollow(b *testing.B, hc *http.Client, start string, pages int) string {
	b.Helper()
	u, _ := url.Parse(start)
	path := u.RequestURI()
	for range pages {
		res, err := hc.Get(u.Scheme + "://" + u.Host + path)
		if err != nil {
			b.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(res.Body)
		res.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		next, ok := doc.Find(`[data-testid="next-page"]`).Attr("href")
		if !ok {
			break
		}
		path = next
	}
	return path
}
