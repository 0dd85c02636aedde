package store_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"countersign/store"
	"countersign/store/dbtest"
)

// minStatements is how many statements collectSQL finds today (constants
// and helpers completed from their callers; run-time sites come on top).
// Fewer means the collector lost some, not that the store has fewer: lower
// it in the commit that removes statements.
const minStatements = 213

// sqlBuilders are the store's functions that build SQL; a site's call of
// one with constant arguments is made for real.
var sqlBuilders = map[string]any{
	"queueSelect":    store.QueueSelect,
	"queueJoins":     store.QueueJoins,
	"distinctValues": store.DistinctValues,
	"histogramSQL":   store.HistogramSQL,
}

// wholeStatement marks a site whose one piece is a whole statement made
// elsewhere and collected there.
var wholeStatement = []string{}

// runtimeSQL gives, per site (file:function), representative values of the
// pieces of SQL that only exist at run time, keyed by the piece's source.
// A site missing here fails the test, and so does an entry no site uses;
// nil marks a site that is only ever a piece of other sites' statements.
var runtimeSQL = map[string]map[string][]string{
	"approval_queue.go:ApprovalQueue": {"where": {store.QueueWhere(false, 2) + " AND (i.deadline_at, i.id) > ($2, $3)", store.QueueWhere(true, 2)},
		"limit": {"26"}},
	"approval_queue.go:CountQueue": {"where": {store.QueueWhere(false, 1), store.QueueWhere(true, 1)}},
	"approval_queue.go:QueueItem":  {},
	// queueSelect's SELECT is a piece of the statements above.
	"approval_queue.go:queueSelect": nil,
	// distinctValues' WITH is a piece of MetricsDimensions' statements.
	"metrics.go:distinctValues": nil,
	// count runs the two constants passed to it.
	"confirmation_code.go:TryConfirmationCode": {"q": wholeStatement},
	// The counts and the newest are the four constants beside it.
	"confirmation_mail_link.go:capMails": {"c.count": wholeStatement, "c.newest": wholeStatement},
	// q is one of the two constants beside it.
	"task_withdraw.go:LockWaitingOfTask": {"q": wholeStatement},
	"invocation.go:transitionInvocation": {
		`strings.Join(set, ", ")`: {transitionSet()},
		// The held form, whose $6 is the lease token: the other is its prefix.
		"where": {"id = $1 AND state = ANY($2) AND ($3 = 0 OR version = $3) AND lease_token = $6"},
	},
	// LISTEN only parses here: PostgreSQL checks nothing more of it.
	"listen.go:listenOnce": {"channel": {"countersign_jobs"}},
	// The task list's filter takes $3 to $5, the cursor and limit follow.
	"task_list.go:TaskList":     {"where": store.TaskListWheres(), "limit": {"$6"}, "rank": {"$6"}, "at": {"$7"}, "id": {"$8"}},
	"task_list.go:taskListPage": {"q": wholeStatement},
	"task_list.go:searchCells":  {"where": {store.TaskSearchWhere()}},
	"task_list.go:countTasks":   {"where": store.TaskListWheres()},
	// q's SQL is the three distinctValues statements below and a constant.
	"metrics.go:MetricsDimensions": {"sql": wholeStatement},
	// The day's statements are its list's constants and its INSERT below.
	"metrics_rollup.go:recomputeInvocationDay": {"q": wholeStatement},
	"metrics_rollup.go:refreshConversations": {
		"resolution": {store.HistogramSQL("resolved", "extract(epoch FROM ended_at - started_at)::float8")},
	},
}

// transitionSet is TransitionInvocation's SET with every column an
// InvocationChange can set, read from its add("column", …) calls.
func transitionSet() string {
	src, err := os.ReadFile("invocation.go")
	if err != nil {
		panic(err)
	}
	set := []string{"state = $4", "version = version + 1", "updated_at = $5"}
	for i, m := range regexp.MustCompile(`\badd\("(\w+)"`).FindAllStringSubmatch(string(src), -1) {
		set = append(set, fmt.Sprintf("%s = $%d", m[1], 7+i))
	}
	return strings.Join(set, ", ")
}

// TestEveryStatementPrepares finds every SQL statement of the store in its
// source and has PostgreSQL prepare it on a freshly migrated database, so
// a wrong table, column or type fails here rather than on a page.
func TestEveryStatementPrepares(t *testing.T) {
	t.Parallel()
	stmts, sites := collectSQL(t)
	if len(stmts) < minStatements {
		t.Fatalf("found %d constant statements in store, want at least %d: the collector is missing some", len(stmts), minStatements)
	}
	if n := strings.Count(transitionSet(), "="); n < 15 {
		t.Fatalf("TransitionInvocation's SET has %d columns, want at least 15: its add calls were not found", n)
	}
	stmts = append(stmts, expandSites(t, sites)...)

	ctx := context.Background()
	pool := dbtest.New(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// The roll-ups' statements read temporary tables (ON COMMIT DROP) that
	// an earlier one creates: create those first, in the transaction, so what
	// reads them is checked too. Each statement is prepared under a
	// savepoint, so one that fails leaves the transaction usable.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	prepare := func(s sqlStatement, exec bool) {
		sp, err := tx.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sd, err := sp.Prepare(ctx, "", s.SQL)
		if err == nil && exec {
			_, err = sp.Exec(ctx, s.SQL, make([]any, len(sd.ParamOIDs))...)
		}
		if err != nil {
			t.Errorf("%s: %v\n%s", s.Pos, err, s.SQL)
			_ = sp.Rollback(ctx)
			return
		}
		if err := sp.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range stmts {
		if strings.HasPrefix(strings.TrimSpace(s.SQL), "CREATE TEMP TABLE") {
			prepare(s, true)
		}
	}
	for _, s := range stmts {
		prepare(s, false)
	}
	t.Logf("prepared %d statements", len(stmts))
}

// expandSites makes each run-time site's statements from its constant
// pieces, its builder calls and runtimeSQL's values for the rest.
func expandSites(t *testing.T, sites []sqlSite) []sqlStatement {
	t.Helper()
	var out []sqlStatement
	used := map[string]bool{}
	for _, site := range sites {
		values, ok := runtimeSQL[site.Key]
		if !ok {
			t.Errorf("%s: SQL built at run time in %s: give its pieces values in runtimeSQL", site.Pos, site.Key)
			continue
		}
		used[site.Key] = true
		if values == nil {
			continue
		}
		texts := []string{""}
		for _, p := range site.Pieces {
			var alts []string
			switch {
			case p.Const:
				alts = []string{p.Text}
			case p.Func != "":
				alts = []string{callBuilder(t, site, p)}
			default:
				v, ok := values[p.Text]
				if !ok {
					t.Errorf("%s: no value for %s in runtimeSQL[%q]", site.Pos, p.Text, site.Key)
					texts = nil
				}
				alts = v
			}
			if len(alts) == 0 {
				texts = nil
				break
			}
			var next []string
			for _, s := range texts {
				for _, a := range alts {
					next = append(next, s+a)
				}
			}
			texts = next
		}
		for _, s := range texts {
			out = append(out, sqlStatement{SQL: s, Pos: site.Pos})
		}
	}
	for key := range runtimeSQL {
		if !used[key] {
			t.Errorf("runtimeSQL[%q]: no such site in store any more", key)
		}
	}
	return out
}

func callBuilder(t *testing.T, site sqlSite, p sqlPiece) string {
	t.Helper()
	fn, ok := sqlBuilders[p.Func]
	if !ok {
		t.Errorf("%s: %s builds SQL: add it to sqlBuilders (and export_test.go)", site.Pos, p.Func)
		return ""
	}
	f := reflect.ValueOf(fn)
	args := make([]reflect.Value, len(p.Args))
	for i, a := range p.Args {
		args[i] = reflect.ValueOf(a).Convert(f.Type().In(i))
	}
	return f.Call(args)[0].String()
}
