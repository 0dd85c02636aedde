package bench

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/store"
	"countersign/store/dbtest"
	"countersign/web/webtest"
)

// metricsHTMLBudget is the bench's metrics_html_kb target: the metrics
// page as the manager first gets it, uncompressed, before any table is
// opened.
const metricsHTMLBudget = 30_000

// TestMetricsPageHTMLOnBenchData: over history seeded as `make bench`
// seeds it (settled invocations over the last weeks and pending ones, by
// COPY, folded into the roll-ups), GET /metrics (the last 28 days) as the
// manager is at most 30 kB of HTML. METRICS_HTML=file writes the page
// there, to see where the bytes go.
func TestMetricsPageHTMLOnBenchData(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.New(t)
	stack := webtest.Assemble(t, store.New(pool), benchStack...)
	st, srv := stack.Store, stack.Server
	u, err := stack.Accounts.Create(ctx, accounts.NewUser{Email: "bench-manager@example.test", Name: "Bench Manager", Role: accounts.Manager,
		Password: "a long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	cookie := pagesSignIn(t, srv.URL, u.Email, "a long enough password")
	if _, err := pool.Exec(ctx, `INSERT INTO assistants (id, name, created_at) VALUES ('asst_pages', 'Bench', now())`); err != nil {
		t.Fatal(err)
	}
	sd := &seeder{pool: pool, assistantID: "asst_pages", now: time.Now()}
	if err := sd.history(ctx, 0, 10000); err != nil {
		t.Fatal(err)
	}
	if err := sd.pending(ctx, 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RefreshMetrics(ctx); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
	req.Header.Set("Cookie", cookie)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-testid="metric-action_success"`) {
		t.Fatalf("GET /metrics: %d, %v", res.StatusCode, err)
	}
	if f := os.Getenv("METRICS_HTML"); f != "" {
		_ = os.WriteFile(f, body, 0o644)
	}
	t.Logf("/metrics: %d bytes of HTML", len(body))
	if len(body) > metricsHTMLBudget {
		t.Errorf("/metrics is %d bytes of HTML before any table is opened, want at most %d", len(body), metricsHTMLBudget)
	}
}
