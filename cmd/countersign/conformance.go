package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/adapter"
	"countersign/internal/adapter/conformance"
	"countersign/internal/httpadapter"
	"countersign/internal/shopadapter"
	"countersign/store"
	"countersign/store/pgcluster"
)

const conformanceUsage = `countersign conformance -system FILE -fixtures FILE [-database-url URL]

Runs every check of the adapter conformance suite against the live system
FILE describes (or -system shop: the built-in shop adapter at -shop-url),
through a fault proxy of its own, with a throwaway request ledger, and
prints each check with pass or fail and why. The writes are real: the
fixture's write is made about five times. Exit status 0 when every check
passes, 1 when one fails, 2 when the run could not start.
`

// runConformance is `countersign conformance`.
func runConformance(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, conformanceUsage+"\nFlags:\n"); fs.PrintDefaults() }
	system := fs.String("system", "", "the system's description file (as in -systems-dir), or \"shop\" for the built-in shop adapter (required)")
	fixtures := fs.String("fixtures", "", "the fixture file naming the system's test objects (required)")
	dbURL := fs.String("database-url", "", "a PostgreSQL server to create the throwaway ledger database on (dropped after the run); empty starts a private cluster in a temporary folder")
	shopURL := fs.String("shop-url", "", "with -system shop: the shop's URL (env SHOP_URL)")
	// The token's default is read after parsing, so that usage never prints it.
	shopToken := fs.String("shop-token", "", "with -system shop: the shop's token (env SHOP_TOKEN)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *shopURL == "" {
		*shopURL = getenv("SHOP_URL")
	}
	if *shopToken == "" {
		*shopToken = getenv("SHOP_TOKEN")
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "conformance: "+format+"\n", a...)
		return 2
	}
	if *system == "" || *fixtures == "" {
		fs.Usage()
		return fail("-system and -fixtures are required")
	}
	fix, file, err := conformance.LoadFixture(*fixtures)
	if err != nil {
		return fail("-fixtures %s: %v", *fixtures, err)
	}
	pool, cleanup, err := throwawayLedger(ctx, *dbURL)
	if err != nil {
		return fail("the ledger: %v", err)
	}
	defer cleanup()
	ledger := adapter.NewLedger(store.New(pool), time.Now)

	connect := func(tr http.RoundTripper) (conformance.LiveBackend, error) {
		client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		if *system == "shop" {
			if *shopURL == "" || *shopToken == "" {
				return conformance.LiveBackend{}, errors.New("-system shop needs -shop-url and -shop-token (SHOP_URL, SHOP_TOKEN)")
			}
			if file.Effects == nil {
				return conformance.LiveBackend{}, errors.New(`-system shop: the fixture file must say where the shop lists its effects ("effects": {"path": "/_ledger?request_id={key}"})`)
			}
			base := strings.TrimRight(*shopURL, "/")
			sys := shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: base, Token: *shopToken, Ledger: ledger, HTTPClient: client})
			get := func(ctx context.Context, path string) (any, error) {
				return getJSON(ctx, client, base+path, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+*shopToken) })
			}
			return conformance.LiveBackend{System: sys, Effects: effectCounter(file.Effects, nil, get)}, nil
		}
		sys, err := httpadapter.LoadFile(*system, httpadapter.Config{Ledger: ledger, HTTPClient: client, Getenv: getenv})
		if err != nil {
			return conformance.LiveBackend{}, fmt.Errorf("-system %s: %w", *system, err)
		}
		if file.Effects == nil && sys.EffectsByQuery() {
			// A GraphQL file's effects are a query, not a path.
			return conformance.LiveBackend{System: sys, Effects: underKeys(func(ctx context.Context, key string) (int, error) {
				return sys.CountEffects(ctx, key)
			}, nil)}, nil
		}
		if file.Effects == nil {
			if _, _, ok, _ := sys.EffectsPath(""); !ok {
				return conformance.LiveBackend{}, fmt.Errorf(`-system %s names no "effects", so the fixture file must say where the system lists its effects by key ("effects": {"path": "…{key}…", "items": "/data"})`, *system)
			}
		}
		return conformance.LiveBackend{System: sys, Effects: effectCounter(file.Effects, sys.EffectsPath, sys.Get)}, nil
	}

	fmt.Fprintf(stdout, "conformance: %s with the fixtures of %s\n", *system, *fixtures)
	if file.Effects == nil || file.Effects.All == "" {
		fmt.Fprintln(stdout, `note: the fixture names no "effects.all", so effects are counted under the run's keys only: dry_run_without_side_effect cannot see a dry run that writes without a key`)
	}
	results, err := conformance.RunLive(ctx, connect, fix, conformance.LiveOptions{FaultRoute: file.FaultRoute}, func(r conformance.Result) {
		if r.Passed() {
			fmt.Fprintf(stdout, "PASS %s (%s)\n", r.Check, r.Took.Round(time.Millisecond))
			return
		}
		fmt.Fprintf(stdout, "FAIL %s (%s)\n", r.Check, r.Took.Round(time.Millisecond))
		for _, p := range r.Problems {
			fmt.Fprintf(stdout, "     %s\n", strings.ReplaceAll(p, "\n", "\n     "))
		}
	})
	if err != nil && len(results) == 0 {
		return fail("%v", err)
	}
	failed := 0
	for _, r := range results {
		if !r.Passed() {
			failed++
		}
	}
	if failed > 0 || err != nil {
		fmt.Fprintf(stdout, "%d of %d checks failed\n", failed, len(results))
		return 1
	}
	fmt.Fprintf(stdout, "all %d checks passed\n", len(results))
	return 0
}

// effectCounter counts a live system's effects under a key: at the
// fixture's effects path when it names one, else at the description's.
// Without an "all" path, every effect is the sum under the keys counted
// so far.
func effectCounter(f *conformance.EffectsFile, described func(key string) (string, string, bool, error),
	get func(ctx context.Context, path string) (any, error)) func(ctx context.Context, key string) (int, error) {
	count := func(ctx context.Context, path, items string) (int, error) {
		answer, err := get(ctx, path)
		if err != nil {
			return 0, err
		}
		if f != nil && f.Total != "" {
			// A paged answer's list is one page; its total counts them all.
			switch n, _ := httpadapter.Pointer(answer, f.Total); total := n.(type) {
			case int64:
				return int(total), nil
			case float64:
				return int(total), nil
			}
			return 0, fmt.Errorf("GET %s: no count at %q", path, f.Total)
		}
		list, _ := httpadapter.Pointer(answer, items)
		rows, ok := list.([]any)
		if !ok {
			return 0, fmt.Errorf("GET %s: no list at %q", path, items)
		}
		return len(rows), nil
	}
	var byKey func(ctx context.Context, key string) (int, error)
	if f != nil && f.Path != "" {
		byKey = func(ctx context.Context, key string) (int, error) {
			return count(ctx, strings.ReplaceAll(f.Path, "{key}", url.QueryEscape(key)), f.Items)
		}
	} else {
		byKey = func(ctx context.Context, key string) (int, error) {
			path, items, _, err := described(key)
			if err != nil {
				return 0, err
			}
			return count(ctx, path, items)
		}
	}
	var all func(ctx context.Context) (int, error)
	if f != nil && f.All != "" {
		all = func(ctx context.Context) (int, error) { return count(ctx, f.All, f.Items) }
	}
	return underKeys(byKey, all)
}

// underKeys counts effects under a key with byKey, and every effect (key
// "") with all, or, when it is nil, as the sum under the keys counted so
// far.
func underKeys(byKey func(ctx context.Context, key string) (int, error), all func(ctx context.Context) (int, error)) func(ctx context.Context, key string) (int, error) {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(ctx context.Context, key string) (int, error) {
		if key != "" {
			mu.Lock()
			seen[key] = true
			mu.Unlock()
			return byKey(ctx, key)
		}
		if all != nil {
			return all(ctx)
		}
		mu.Lock()
		keys := make([]string, 0, len(seen))
		for k := range seen {
			keys = append(keys, k)
		}
		mu.Unlock()
		total := 0
		for _, k := range keys {
			n, err := byKey(ctx, k)
			if err != nil {
				return 0, err
			}
			total += n
		}
		return total, nil
	}
}

// getJSON GETs u and decodes its JSON answer; anything but 200 fails.
func getJSON(ctx context.Context, c *http.Client, u string, authorize func(*http.Request)) (any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	authorize(req)
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", req.URL.Path, resp.Status)
	}
	var v any
	if err := json.NewDecoder(io.LimitReader(resp.Body, adapter.MaxAnswerBytes)).Decode(&v); err != nil {
		return nil, fmt.Errorf("GET %s: %w", req.URL.Path, err)
	}
	return v, nil
}

// throwawayLedger opens a fresh, migrated database for the run's request
// ledger: created on the server at serverURL and dropped afterwards, or,
// without one, in a private cluster under a temporary folder, stopped and
// removed afterwards.
func throwawayLedger(ctx context.Context, serverURL string) (*pgxpool.Pool, func(), error) {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "countersign_conformance_" + hex.EncodeToString(b)
	var stop func()
	if serverURL == "" {
		dir, err := os.MkdirTemp("", "countersign-conformance-")
		if err != nil {
			return nil, nil, err
		}
		cluster, err := pgcluster.Start(ctx, pgcluster.Config{DataDir: dir, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, fmt.Errorf("start a private PostgreSQL (or give -database-url): %w", err)
		}
		serverURL = cluster.URL("postgres")
		stop = func() {
			stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = cluster.Stop(stopCtx)
			for _, d := range []string{cluster.DataDir(), dir} {
				os.RemoveAll(d)
				os.Remove(d + ".log")
			}
		}
	}
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, nil, fmt.Errorf("-database-url must be a postgres:// URL")
	}
	if err := createDatabase(ctx, serverURL, name); err != nil {
		if stop != nil {
			stop()
		}
		return nil, nil, fmt.Errorf("%w (fix: a role that may CREATE DATABASE)", err)
	}
	drop := func() {
		dropCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(dropCtx, serverURL); err == nil {
			_, _ = conn.Exec(dropCtx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			conn.Close(dropCtx)
		}
		if stop != nil {
			stop()
		}
	}
	u.Path = "/" + name
	pool, err := store.Open(ctx, u.String(), 30*time.Second)
	if err != nil {
		drop()
		return nil, nil, err
	}
	if _, err := store.Migrate(ctx, pool); err != nil {
		pool.Close()
		drop()
		return nil, nil, err
	}
	return pool, func() { pool.Close(); drop() }, nil
}
