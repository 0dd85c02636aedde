package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
	"countersign/internal/demo"
	"countersign/store"
	"countersign/store/dbtest"
)

// BenchmarkMetricsPageScale times GET /metrics (every query the page runs,
// its rendering and HTTP) over 10,000 invocations and 2,000 conversations,
// then grows the same database to 1,000,000 invocations and 200,000
// conversations and times it again, printing both medians and their ratio.
// Run it once: go test ./web/ -run '^$' -bench BenchmarkMetricsPageScale -benchtime 1x -timeout 30m
func BenchmarkMetricsPageScale(b *testing.B) {
	ctx := context.Background()
	// The stack's clock stands still at 2026-04-01 09:00 UTC: now.
	stack := webtest.Assemble(b, store.New(dbtest.New(b)))
	st, srv, now := stack.Store, stack.Server, stack.Now()
	if _, err := stack.Accounts.Create(ctx, accounts.NewUser{Email: "manager@bench.test", Name: "Bench Manager", Role: accounts.Manager,
		Password: "correct horse manager"}); err != nil {
		b.Fatal(err)
	}
	httpc := signedInClient(b, srv.URL, "manager@bench.test", "correct horse manager")

	load := func(prefix string, invocations, conversations int) {
		b.Helper()
		start := time.Now()
		if err := demo.LoadHistory(ctx, st, demo.HistorySpec{Prefix: prefix, Invocations: invocations, Conversations: conversations,
			Days: 365, End: now, AssistantID: "asst_bench"}); err != nil {
			b.Fatal(err)
		}
		loaded := time.Since(start)
		// Autovacuum would analyze the new rows soon; do it now so that the
		// measurement does not race it.
		if _, err := st.Pool().Exec(ctx, "VACUUM ANALYZE"); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		rep, err := st.RefreshMetrics(ctx)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("loaded %d invocations and %d conversations in %s; incremental roll-up refresh %s (%d invocation days, %d conversation days)\n",
			invocations, conversations, loaded.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), rep.InvocationDays, rep.ConversationDays)
	}
	pages := map[string]string{"last 28 days": "/metrics", "a whole year": "/metrics?from=2025-04-02&to=2026-04-01&action=issue_refund"}
	measure := func() map[string]time.Duration {
		b.Helper()
		out := map[string]time.Duration{}
		for name, path := range pages {
			var times []time.Duration
			for i := range 23 {
				start := time.Now()
				res, err := httpc.Get(srv.URL + path)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Fatalf("%s: %d", path, res.StatusCode)
				}
				if i >= 3 { // the first requests warm caches
					times = append(times, time.Since(start))
				}
			}
			slices.Sort(times)
			out[name] = times[len(times)/2]
		}
		return out
	}
	b.ResetTimer()
	for b.Loop() {
		load("s", 10_000, 2_000)
		small := measure()
		load("l", 990_000, 198_000)
		large := measure()
		for name := range pages {
			ratio := float64(large[name]) / float64(small[name])
			fmt.Printf("metrics page, %s: median %s at 10,000 invocations, %s at 1,000,000; ratio %.2f\n",
				name, small[name].Round(10*time.Microsecond), large[name].Round(10*time.Microsecond), ratio)
			b.ReportMetric(ratio, "ratio("+strings.ReplaceAll(name, " ", "_")+")")
		}
	}
}

// signedInClient signs in through the form and returns a client holding
// the session cookie.
func signedInClient(b *testing.B, base, email, password string) *http.Client {
	b.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(base + "/sign-in")
	if err != nil {
		b.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(res.Body)
	res.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	tok, _ := doc.Find(`input[name="_csrf"]`).Attr("value")
	req, _ := http.NewRequest(http.MethodPost, base+"/sign-in",
		strings.NewReader(url.Values{"_csrf": {tok}, "email": {email}, "password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err = c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		b.Fatalf("sign in: %d", res.StatusCode)
	}
	return c
}
