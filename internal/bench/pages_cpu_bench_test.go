package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/store"
	"countersign/store/dbtest"
	"countersign/web/webtest"
)

// selfCPU is this process's user and system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPageCPU serves GET /queue (the first page, 25 cards) and GET
// /tasks/{id} (ten pending requests) one request at a time, straight into
// the handler (no sockets, no load generator), as the signed-in agent
// with Accept-Encoding: gzip, over 500 pending and 5,000 settled
// invocations seeded as `make bench` seeds them: ns/op and allocs/op are
// one page's cost in the console, its statements' round trips included;
// cpu-ns/op is the console's CPU per page. PAGES_DUMP=dir writes each
// page there as sent (gzipped), to see where its bytes go.
// With -cpuprofile the profile is the console's alone:
//
//	go test ./internal/bench/ -run '^$' -bench PageCPU -benchmem -cpuprofile cpu.out
func BenchmarkPageCPU(b *testing.B) {
	ctx := context.Background()
	pool := dbtest.New(b)
	stack := webtest.Assemble(b, store.New(pool), benchStack...)
	h, srv := stack.Web.Handler(), stack.Server
	u, err := stack.Accounts.Create(ctx, accounts.NewUser{Email: "bench-agent@example.test", Name: "Bench Agent", Role: accounts.Agent,
		Password: "a long enough password"})
	if err != nil {
		b.Fatal(err)
	}
	cookie := pagesSignIn(b, srv.URL, u.Email, "a long enough password")
	if _, err := pool.Exec(ctx, `INSERT INTO assistants (id, name, created_at) VALUES ('asst_pages', 'Bench', now())`); err != nil {
		b.Fatal(err)
	}
	sd := &seeder{pool: pool, assistantID: "asst_pages", now: time.Now()}
	if err := sd.history(ctx, 0, 5000); err != nil {
		b.Fatal(err)
	}
	if err := sd.pending(ctx, 500); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		b.Fatal(err)
	}
	for _, page := range []struct{ name, path string }{{"queue", "/queue"}, {"task", "/tasks/tsk_benchp0"}} {
		b.Run(page.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, page.path, nil)
			req.Header.Set("Cookie", cookie)
			req.Header.Set("Accept-Encoding", "gzip")
			serve := func() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req.Clone(ctx))
				if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "gzip" {
					b.Fatalf("GET %s: %d, encoding %q", page.path, rec.Code, rec.Header().Get("Content-Encoding"))
				}
			}
			for range 20 { // warm the pool's connections and their statements
				serve()
			}
			if dir := os.Getenv("PAGES_DUMP"); dir != "" {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req.Clone(ctx))
				_ = os.WriteFile(filepath.Join(dir, page.name+".html.gz"), rec.Body.Bytes(), 0o644)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := selfCPU()
			for range b.N {
				serve()
			}
			// The console's own CPU per page (this process: no client, the
			// database apart), which wall time under a shared machine's
			// load does not say.
			b.ReportMetric(float64(selfCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
