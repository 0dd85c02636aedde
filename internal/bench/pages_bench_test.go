package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/accounts"
	"countersign/store"
	"countersign/store/dbtest"
	"countersign/web/webtest"
)

// benchStack is how these measurements assemble the console
// (webtest.Assemble): in real time, as the seeder dates its rows, with
// sessions that outlive a long seeding, and the shop offline (the pages
// read its actions and the seeded quotes; nothing calls it).
var benchStack = []webtest.Option{webtest.WithNow(time.Now), webtest.WithSessionLifetime(time.Hour, 12*time.Hour), webtest.WithOfflineShop()}

// BenchmarkQueueAndTaskPages drives GET /queue (first page) at 64 and 8
// connections and GET /tasks/{id} (a task of ten pending requests) at 64,
// in process (real HTTP, real PostgreSQL), beside a bare Echo handler in
// the same run, over two data sets seeded by COPY as `make bench` seeds
// them: a small one (500 pending, 5,000 settled) and a large one
// (PAGES_PENDING pending, default 100,000, and PAGES_SETTLED settled,
// default 1,000,000). With PAGES_EXPLAIN=1 it prints EXPLAIN (ANALYZE,
// BUFFERS) of every statement one request of each page runs. Run it once,
// with a CPU profile of the console side:
//
//	go test ./internal/bench/ -run '^$' -bench QueueAndTaskPages -benchtime 1x -cpuprofile cpu.out
func BenchmarkQueueAndTaskPages(b *testing.B) {
	ctx := context.Background()
	pool := dbtest.New(b)
	stack := webtest.Assemble(b, store.New(pool), benchStack...)
	srv := stack.Server
	u, err := stack.Accounts.Create(ctx, accounts.NewUser{Email: "bench-agent@example.test", Name: "Bench Agent", Role: accounts.Agent,
		Password: "a long enough password"})
	if err != nil {
		b.Fatal(err)
	}
	header := http.Header{"Cookie": {pagesSignIn(b, srv.URL, u.Email, "a long enough password")}, "Accept-Encoding": {"gzip"}}
	if _, err := pool.Exec(ctx, `INSERT INTO assistants (id, name, created_at) VALUES ('asst_pages', 'Bench', now())`); err != nil {
		b.Fatal(err)
	}
	echoURL, stopEcho, err := StartBareEcho()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(stopEcho)
	window := envDuration("PAGES_WINDOW", 5*time.Second)
	postmaster := postmasterPID(b, pool)
	load := func(url string, h http.Header, conns int) LoadResult {
		b.Helper()
		goCPU, pgCPU := processCPU(os.Getpid()), childrenCPU(postmaster)
		res, err := Load{URL: url, Header: h, Connections: conns, Duration: window, Warmup: window / 5}.Run(ctx)
		if err != nil || res.Errors > 0 {
			b.Fatalf("GET %s at %d: %v (%d errors, first %s)", url, conns, err, res.Errors, res.FirstError)
		}
		if h != nil {
			// Over the warm-up and the window, per answer counted in the
			// window: an upper bound (the warm-up's answers are not counted),
			// the same for every page. The Go side includes the load
			// generator.
			n := float64(res.Requests) * 1.2
			pagesLogf("  CPU per request at %d connections: console+client %.2f ms, database %.2f ms", conns,
				ms(processCPU(os.Getpid())-goCPU)/n, ms(childrenCPU(postmaster)-pgCPU)/n)
		}
		return res
	}
	sd := &seeder{pool: pool, assistantID: "asst_pages", now: time.Now()}
	measure := func(label string) {
		b.Helper()
		if _, err := pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
			b.Fatal(err)
		}
		if os.Getenv("PAGES_EXPLAIN") == "1" {
			explainRequest(b, pool, srv.URL+"/queue", header)
			explainRequest(b, pool, srv.URL+"/tasks/tsk_benchp0", header)
		}
		echo := load(echoURL, nil, 64)
		q64 := load(srv.URL+"/queue", header, 64)
		q8 := load(srv.URL+"/queue", header, 8)
		t64 := load(srv.URL+"/tasks/tsk_benchp0", header, 64)
		pagesLogf("%s: bare Echo %.0f req/s at 64", label, echo.RPS())
		if os.Getenv("PAGES_EXPLAIN") == "1" {
			planCounts(b, pool)
		}
		pagesLogf("%s: /queue  64 conns %6.0f req/s (%.3f× Echo) p50 %6.2f ms p99 %6.2f ms", label, q64.RPS(), q64.RPS()/echo.RPS(),
			ms(q64.Latency.Quantile(0.5)), ms(q64.Latency.Quantile(0.99)))
		pagesLogf("%s: /queue   8 conns %6.0f req/s p50 %6.2f ms p99 %6.2f ms, %.0f bytes as sent", label, q8.RPS(),
			ms(q8.Latency.Quantile(0.5)), ms(q8.Latency.Quantile(0.99)), float64(q8.Bytes)/float64(q8.Requests))
		pagesLogf("%s: /tasks/{id} 64 conns %6.0f req/s (%.3f× Echo) p50 %6.2f ms p99 %6.2f ms", label, t64.RPS(), t64.RPS()/echo.RPS(),
			ms(t64.Latency.Quantile(0.5)), ms(t64.Latency.Quantile(0.99)))
	}
	for range b.N {
		if err := sd.history(ctx, 0, 5000); err != nil {
			b.Fatal(err)
		}
		if err := sd.pending(ctx, 500); err != nil {
			b.Fatal(err)
		}
		measure("small (500 pending, 5,000 settled)")
		settled, pending := envInt("PAGES_SETTLED", 1000000), envInt("PAGES_PENDING", 100000)
		t0 := time.Now()
		if err := sd.history(ctx, 5000, settled); err != nil {
			b.Fatal(err)
		}
		// The small set's pending rows are the first of the large one's.
		if err := sd.load(ctx, "p", 500, pending, func(g int) invRow {
			return invRow{action: g % 2, state: "awaiting_approval", taskState: "active",
				created:  sd.now.Add(-time.Duration(g%7200) * time.Second),
				deadline: sd.now.Add(time.Hour + time.Duration(g%86400)*time.Second)}
		}); err != nil {
			b.Fatal(err)
		}
		pagesLogf("seeded %d settled and %d pending in %s", settled, pending, time.Since(t0).Round(time.Second))
		measure(fmt.Sprintf("large (%d pending, %d settled)", pending, settled))
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}

// pagesSignIn signs in through the real form and returns the session's
// Cookie header.
func pagesSignIn(b testing.TB, base, email, password string) string {
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
	req, _ := http.NewRequest(http.MethodPost, base+"/sign-in",
		strings.NewReader(url.Values{"_csrf": {tok}, "email": {email}, "password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if res, err = hc.Do(req); err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	if res.Request.URL.Path == "/sign-in" {
		b.Fatal("bench sign-in failed")
	}
	bu, _ := url.Parse(base)
	var parts []string
	for _, c := range jar.Cookies(bu) {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}

// statementLog records the statements a pool runs, with their arguments.
type statementLog struct {
	mu   sync.Mutex
	on   bool
	seen []loggedStatement
}

type loggedStatement struct {
	sql  string
	args []any
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.on {
		l.seen = append(l.seen, loggedStatement{d.SQL, d.Args})
	}
	return ctx
}

func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// explainRequest serves one GET of url from a second server over the same
// database whose pool records its statements, then prints EXPLAIN
// (ANALYZE, BUFFERS) of each.
func explainRequest(b *testing.B, pool *pgxpool.Pool, target string, h http.Header) {
	b.Helper()
	ctx := context.Background()
	cfg := pool.Config()
	log := &statementLog{}
	cfg.ConnConfig.Tracer = log
	traced, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer traced.Close()
	srv := webtest.Assemble(b, store.New(traced), benchStack...).Server
	defer srv.Close()
	u, _ := url.Parse(target)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+u.RequestURI(), nil)
	req.Header = h.Clone()
	log.on = true
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	log.mu.Lock()
	log.on = false
	seen := log.seen
	log.mu.Unlock()
	var out strings.Builder
	fmt.Fprintf(&out, "GET %s (%d): %d statements\n", u.RequestURI(), res.StatusCode, len(seen))
	for i, s := range seen {
		fmt.Fprintf(&out, "--- statement %d:\n%s\n", i+1, strings.TrimSpace(s.sql))
		// In a transaction rolled back: a write the request made (the
		// session's touch) is explained, not done twice.
		tx, err := pool.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		rows, _ := tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+s.sql, s.args...)
		plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err == nil && len(s.args) > 0 {
			// What a connection runs after five executions: the cached
			// generic plan.
			name := fmt.Sprintf("pages_q%d", i)
			ps := make([]string, len(s.args))
			for i, a := range s.args {
				ps[i] = sqlLiteral(a)
			}
			_, err = tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_generic_plan; PREPARE "+name+" AS "+s.sql)
			if err == nil {
				rows, _ := tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) EXECUTE "+name+"("+strings.Join(ps, ", ")+")")
				var generic []string
				if generic, err = pgx.CollectRows(rows, pgx.RowTo[string]); err == nil {
					plan = append(append(plan, "(generic plan:)"), generic...)
				}
				_, _ = tx.Exec(ctx, "DEALLOCATE "+name)
			}
		}
		_ = tx.Rollback(ctx)
		if err != nil {
			fmt.Fprintf(&out, "(no plan: %v)\n", err)
			continue
		}
		out.WriteString(strings.Join(plan, "\n") + "\n")
	}
	fmt.Print(out.String())
}

// pagesLogf prints a figure at once (a benchmark's log is cut short and
// held until it ends).
func pagesLogf(format string, args ...any) {
	fmt.Printf(format+"\n", args...)
}

// planCounts prints, for one of the pool's connections, how often each of
// its prepared statements was planned for its arguments (custom) or ran a
// cached generic plan.
func planCounts(b *testing.B, pool *pgxpool.Pool) {
	b.Helper()
	rows, _ := pool.Query(context.Background(), `SELECT generic_plans, custom_plans, left(regexp_replace(statement, '\s+', ' ', 'g'), 90)
		FROM pg_prepared_statements ORDER BY custom_plans DESC`)
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct {
		Generic, Custom int64
		SQL             string
	}])
	if err != nil {
		b.Fatal(err)
	}
	for _, g := range got {
		pagesLogf("plans: generic %5d custom %5d  %s", g.Generic, g.Custom, g.SQL)
	}
}

// sqlLiteral writes a statement's argument as an SQL literal (of the
// types the console's reads pass).
func sqlLiteral(a any) string {
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch v := a.(type) {
	case nil:
		return "NULL"
	case string:
		return quote(v)
	case []byte:
		return fmt.Sprintf("'\\x%x'", v)
	case time.Time:
		return quote(v.UTC().Format(time.RFC3339Nano))
	case *time.Time:
		if v == nil {
			return "NULL"
		}
		return quote(v.UTC().Format(time.RFC3339Nano))
	case *int64:
		if v == nil {
			return "NULL"
		}
		return strconv.FormatInt(*v, 10)
	case []string:
		return quote("{" + strings.Join(v, ",") + "}")
	}
	return fmt.Sprint(a)
}

// postmasterPID is the process id of the PostgreSQL server behind pool.
func postmasterPID(b *testing.B, pool *pgxpool.Pool) int {
	b.Helper()
	var backend int
	if err := pool.QueryRow(context.Background(), `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		b.Fatal(err)
	}
	f := procStat(backend)
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// procStat is /proc/pid/stat's fields after the command (state first).
func procStat(pid int) []string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(raw)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// processCPU is a process's user and system CPU time so far.
func processCPU(pid int) time.Duration {
	f := procStat(pid)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// childrenCPU is the CPU time so far of parent's live child processes (a
// PostgreSQL server's backends and workers).
func childrenCPU(parent int) time.Duration {
	entries, _ := os.ReadDir("/proc")
	var total time.Duration
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStat(pid); len(f) > 1 && f[1] == strconv.Itoa(parent) {
			total += processCPU(pid)
		}
	}
	return total
}
