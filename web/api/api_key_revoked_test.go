package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"countersign/web/webtest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign/internal/adapter"
)

// heldDryRun is a system whose next dry run, once armed, says so on
// reached and waits for release before it goes on.
type heldDryRun struct {
	adapter.System
	reached, release chan struct{}
}

func (h *heldDryRun) DryRun(ctx context.Context, p adapter.Principal, action string, args json.RawMessage) (adapter.Quote, error) {
	close(h.reached)
	<-h.release
	return h.System.DryRun(ctx, p, action, args)
}

// holdShopDryRun puts the shop behind a heldDryRun for the next proposal.
func holdShopDryRun(t *testing.T, b *webtest.Stack) *heldDryRun {
	t.Helper()
	shop, err := b.Web.Registry().System("shop")
	if err != nil {
		t.Fatal(err)
	}
	h := &heldDryRun{System: shop, reached: make(chan struct{}), release: make(chan struct{})}
	b.Web.Registry().Connect(h)
	t.Cleanup(func() { b.Web.Registry().Connect(shop) })
	return h
}

// invocationCount is how many invocations the stack's task has.
func invocationCount(t *testing.T, b *webtest.Stack) int {
	t.Helper()
	var n int
	if err := b.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM invocations WHERE task_id = $1`, b.TaskID()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAProposalWhoseKeyIsRevokedDuringItsDryRunIsNotRecorded revokes the
// assistant's key while its proposal is being dry-run, over the API and
// over MCP: the proposal, authenticated when it began, is refused
// (key_revoked) and nothing is recorded.
func TestAProposalWhoseKeyIsRevokedDuringItsDryRunIsNotRecorded(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"api", "mcp"} {
		t.Run(via, func(t *testing.T) {
			t.Parallel()
			b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
			order := b.DamagedOrder(t)
			sum := sha256.Sum256([]byte(b.Key))
			key, err := b.Store.APIKeyByHash(context.Background(), sum[:])
			if err != nil {
				t.Fatal(err)
			}
			var cs *mcp.ClientSession
			if via == "mcp" {
				if cs, err = mcpSession(t, b, b.Key, b.TaskID()); err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
			}
			held := holdShopDryRun(t, b)
			code := make(chan string, 1)
			go func() {
				if via == "api" {
					res := webtest.CallAPI(t, b.Server.URL, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations",
						map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 1500)})
					code <- fmt.Sprintf("%d %v", res.Status, res.JSON["code"])
					return
				}
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "propose_issue_refund",
					Arguments: map[string]any{"order_id": order, "amount_cents": 1500, "reason_code": "damaged"}})
				if err != nil {
					code <- err.Error()
					return
				}
				raw, _ := json.Marshal(res.StructuredContent)
				code <- string(raw)
			}()
			<-held.reached
			if _, err := b.Assistants.RevokeKey(context.Background(), key.ID); err != nil {
				t.Fatal(err)
			}
			close(held.release)
			got := <-code
			if !strings.Contains(got, "key_revoked") {
				t.Errorf("the proposal after its key was revoked: %s, want refused with key_revoked", got)
			}
			if n := invocationCount(t, b); n != 0 {
				t.Errorf("%d invocations recorded after the key was revoked, want none", n)
			}
		})
	}
}
