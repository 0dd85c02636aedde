package chaos

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"countersign/internal/demoshop"
	"countersign/internal/gqlshop"
)

// The second systems a wide round may connect beside the shop (Config.SecondSystem).
const (
	// SecondWarehouse is the warehouse: a demo shop described by
	// warehouse.json (the default).
	SecondWarehouse = "warehouse"
	// SecondGraphQL is the GraphQL shop (internal/gqlshop) described by
	// graphql-shop.json: its refunds are the second system's writes.
	SecondGraphQL = "graphql"
)

// systemGraphQL and actionGQLRefund are the GraphQL shop's name and the
// action the driver proposes in it, at stage 5.
const (
	systemGraphQL   = "graphql-shop"
	actionGQLRefund = "refund_order"
)

// graphqlFile describes the GraphQL shop to the consoles (SYSTEMS_DIR). It
// is internal/httpadapter's example file with its effects lookup declared
// authoritative: the shop records a refund and its key together under one
// lock in the one store its refunds query reads, so no refund under a key
// a minute after the call began means none ever.
//
//go:embed graphql-shop.json
var graphqlFile []byte

// startGraphQL starts the GraphQL shop on a loopback port behind the
// campaign's fault rules, knowing the operator, and writes its
// description file into SYSTEMS_DIR.
func (w *world) startGraphQL() error {
	w.gql = gqlshop.New("chaos-gql-token", time.Now)
	w.gqlOperator = w.gql.CreateCustomer("operator@chaos.test", "Shop Operator")
	w.gqlFaults = &gqlFaults{shop: w.gql, rnd: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	w.gqlURL = "http://" + l.Addr().String()
	w.gqlSrv = &http.Server{Handler: w.gqlFaults, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = w.gqlSrv.Serve(l) }()
	return os.WriteFile(filepath.Join(w.systemsDir, "graphql-shop.json"), graphqlFile, 0o644)
}

// newGQLOrder is a fresh paid order of the operator's in the GraphQL
// shop, worth more than any refund the driver proposes on it, in US
// dollars: the policy's limits are, and a refund in another currency is
// compared with none of them but goes to a person.
func (w *world) newGQLOrder() string {
	return w.gql.CreateOrder(w.gqlOperator, "Chaos crate", 20000, "USD")
}

// gqlFaults plays the campaign's shop faults on the GraphQL shop's
// mutations, as the demo shops' /_faults rules do on their writes: latency
// on every request, and on a mutation a 503 or a reset before it runs
// (shop_5xx, shop_reset, at the rule's rate), its answer dropped after it
// ran (shop_drop) or a GraphQL error after it ran (shop_ignore: a GraphQL
// shop cannot answer done and roll back, it fails after applying).
type gqlFaults struct {
	shop *gqlshop.Shop
	mu   sync.Mutex
	rnd  *rand.Rand
	rule gqlRule
}

// gqlRule is the fault rule in force; the zero rule plays nothing.
type gqlRule struct {
	latency              time.Duration
	errorRate, resetRate float64
	drops, failures      int
}

// set puts the demo shops' /_faults rule in force (nil clears it).
func (g *gqlFaults) set(rule map[string]any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if rule == nil {
		g.rule = gqlRule{}
		return
	}
	if n, ok := rule["latency_ms"].(int); ok {
		g.rule.latency = time.Duration(n) * time.Millisecond
	}
	if f, ok := rule["error_rate"].(float64); ok {
		g.rule.errorRate = f
	}
	if f, ok := rule["reset_rate"].(float64); ok {
		g.rule.resetRate = f
	}
	if n, ok := rule["drop_after_commit"].(int); ok {
		g.rule.drops = n
	}
	if n, ok := rule["ignore_writes"].(int); ok {
		g.rule.failures = n
	}
}

// ServeHTTP waits the rule's latency, arms the shop's fault for a
// mutation the rule hits, and lets the shop answer.
func (g *gqlFaults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	g.mu.Lock()
	latency := g.rule.latency
	if isMutation(raw) {
		switch {
		case g.rnd.Float64() < g.rule.errorRate:
			g.shop.Fault(gqlshop.FaultServerError)
		case g.rnd.Float64() < g.rule.resetRate:
			g.shop.Fault(gqlshop.FaultReset)
		case g.rule.drops > 0:
			g.rule.drops--
			g.shop.Fault(gqlshop.FaultDropAfterCommit)
		case g.rule.failures > 0:
			g.rule.failures--
			g.shop.FailAfterCommit()
		}
	}
	g.mu.Unlock()
	if latency > 0 {
		select {
		case <-time.After(latency):
		case <-r.Context().Done():
			return
		}
	}
	g.shop.ServeHTTP(w, r)
}

func isMutation(raw []byte) bool {
	var body struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(raw, &body)
	return strings.HasPrefix(strings.TrimSpace(body.Query), "mutation")
}

// readGQLEffects reads every refund of the GraphQL shop through the
// refunds query its effects lookup uses (without a key: all of them, page
// by page), as ledger entries: the key, the kind, the order.
func readGQLEffects(ctx context.Context, base, token string) ([]demoshop.LedgerEntry, error) {
	const query = `query All($after: String) { refunds(first: 100, after: $after) { nodes { id kind orderId idempotencyKey createdAt } pageInfo { hasNextPage endCursor } } }`
	var all []demoshop.LedgerEntry
	var after *string
	for {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"after": after}})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			return nil, err
		}
		var out struct {
			Data struct {
				Refunds struct {
					Nodes []struct {
						ID, Kind, OrderID, IdempotencyKey, CreatedAt string
					}
					PageInfo struct {
						HasNextPage bool
						EndCursor   *string
					}
				}
			}
			Errors []any
		}
		err = json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read the GraphQL shop's refunds: %w", err)
		}
		if len(out.Errors) > 0 {
			return nil, fmt.Errorf("read the GraphQL shop's refunds: %v", out.Errors)
		}
		for _, n := range out.Data.Refunds.Nodes {
			at, _ := time.Parse("2006-01-02T15:04:05Z", n.CreatedAt)
			var id int64
			_, _ = fmt.Sscanf(n.ID, "re_%d", &id)
			all = append(all, demoshop.LedgerEntry{ID: id, RequestID: n.IdempotencyKey, Kind: n.Kind, Object: n.OrderID, At: at})
		}
		if !out.Data.Refunds.PageInfo.HasNextPage {
			return all, nil
		}
		after = out.Data.Refunds.PageInfo.EndCursor
	}
}
