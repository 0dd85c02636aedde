package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign/internal/accounts"
	"countersign/web/webtest"
)

// TestAProposalWhoseGrantIsRevokedDuringItsDryRunIsNotRecorded revokes
// the connection (the grant) of a client's access token while its
// proposal is being dry-run over MCP: the proposal, authenticated when it
// began, is refused (token_revoked) and nothing is recorded, as for a
// revoked key.
func TestAProposalWhoseGrantIsRevokedDuringItsDryRunIsNotRecorded(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	order := b.DamagedOrder(t)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	access := c.OAuthTokens(b.Assistant.ID)["access_token"].(string)
	var grant string
	if err := b.Store.Pool().QueryRow(context.Background(), `SELECT id FROM oauth_grants`).Scan(&grant); err != nil {
		t.Fatal(err)
	}
	cs, err := mcpSession(t, b, access, b.TaskID())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	held := holdShopDryRun(t, b)
	answer := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "propose_issue_refund",
			Arguments: map[string]any{"order_id": order, "amount_cents": 1500, "reason_code": "damaged"}})
		if err != nil {
			answer <- err.Error()
			return
		}
		raw, _ := json.Marshal(res.StructuredContent)
		answer <- string(raw)
	}()
	<-held.reached
	if err := b.AuthServer.RevokeGrant(context.Background(), b.Users[accounts.Admin].Actor(), grant); err != nil {
		t.Fatal(err)
	}
	close(held.release)
	if got := <-answer; !strings.Contains(got, "token_revoked") {
		t.Errorf("the proposal after its grant was revoked: %s, want refused with token_revoked", got)
	}
	if n := invocationCount(t, b); n != 0 {
		t.Errorf("%d invocations recorded after the grant was revoked, want none", n)
	}
}

// TestAPersonsTokensStopWithTheirStaffAccount: the tokens a person's
// consent issued stop when their account is disabled, or is no longer
// one of the staff, and work again when it is enabled.
func TestAPersonsTokensStopWithTheirStaffAccount(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	agent, admin := b.Users[accounts.Agent], b.Users[accounts.Admin]
	c := b.Client(t)
	c.MustSignIn(agent)
	access := c.OAuthTokens("self")["access_token"].(string)
	ctx := context.Background()
	steps := []struct {
		name   string
		change func() error
		want   int
	}{
		{"disabled", func() error { return b.Accounts.SetDisabled(ctx, admin.User, agent.ID, true) }, 401},
		{"enabled again", func() error { return b.Accounts.SetDisabled(ctx, admin.User, agent.ID, false) }, 200},
		{"made a customer", func() error { return b.Accounts.SetRole(ctx, admin.User, agent.ID, accounts.Customer) }, 401},
	}
	for _, s := range steps {
		if err := s.change(); err != nil {
			t.Fatal(err)
		}
		if got := mcpStatus(t, b, b.Server.URL, access); got != s.want {
			t.Errorf("%s: /mcp answers %d, want %d", s.name, got, s.want)
		}
	}
}

// TestAProposalWhosePersonLeavesTheStaffDuringItsDryRunIsNotRecorded
// disables the person whose consent issued a client's access token, or
// makes them a customer, while the token's proposal is being dry-run over
// MCP: the grant no longer stands in the transaction that would record
// the proposal, so it is refused (token_revoked) and nothing is recorded,
// as when the grant itself is revoked.
func TestAProposalWhosePersonLeavesTheStaffDuringItsDryRunIsNotRecorded(t *testing.T) {
	t.Parallel()
	for name, change := range map[string]func(b *webtest.Stack) error{
		"disabled": func(b *webtest.Stack) error {
			return b.Accounts.SetDisabled(context.Background(), b.Users[accounts.Admin].User, b.Users[accounts.Agent].ID, true)
		},
		"made a customer": func(b *webtest.Stack) error {
			return b.Accounts.SetRole(context.Background(), b.Users[accounts.Admin].User, b.Users[accounts.Agent].ID, accounts.Customer)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
			order := b.DamagedOrder(t)
			c := b.Client(t)
			c.MustSignIn(b.Users[accounts.Agent])
			access := c.OAuthTokens(b.Assistant.ID)["access_token"].(string)
			cs, err := mcpSession(t, b, access, b.TaskID())
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			held := holdShopDryRun(t, b)
			answer := make(chan string, 1)
			go func() {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "propose_issue_refund",
					Arguments: map[string]any{"order_id": order, "amount_cents": 1500, "reason_code": "damaged"}})
				if err != nil {
					answer <- err.Error()
					return
				}
				raw, _ := json.Marshal(res.StructuredContent)
				answer <- string(raw)
			}()
			<-held.reached
			if err := change(b); err != nil {
				t.Fatal(err)
			}
			close(held.release)
			if got := <-answer; !strings.Contains(got, "token_revoked") {
				t.Errorf("the proposal after the person was %s: %s, want refused with token_revoked", name, got)
			}
			if n := invocationCount(t, b); n != 0 {
				t.Errorf("%d invocations recorded after the person was %s, want none", n, name)
			}
		})
	}
}

// TestAProposalWhoseGrantEndsDuringItsDryRunIsNotRecorded: a proposal
// made with a live access token whose consent (grant) ends while its dry
// run is still running is refused in the transaction that would record
// it (token_revoked), as when the grant is revoked.
func TestAProposalWhoseGrantEndsDuringItsDryRunIsNotRecorded(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	access := c.OAuthTokens("self")["access_token"].(string)
	// The consent is five minutes from its end (as after 90 days less
	// five minutes, without the shop's orders ageing meanwhile).
	if _, err := b.Store.Pool().Exec(context.Background(), `UPDATE oauth_grants SET expires_at = $1`,
		b.Clock.Now().Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	open, err := mcpSession(t, b, access, "")
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	task := callTool(t, open, "open_task", map[string]any{"customer_ref": webtest.Jordan, "conversation_id": "late-1",
		"allowed_actions": []string{"issue_refund"}})
	cs, err := mcpSession(t, b, access, task["id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	order := b.DamagedOrder(t)
	held := holdShopDryRun(t, b)
	answer := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "propose_issue_refund",
			Arguments: map[string]any{"order_id": order, "amount_cents": 1500, "reason_code": "damaged"}})
		if err != nil {
			answer <- err.Error()
			return
		}
		raw, _ := json.Marshal(res.StructuredContent)
		answer <- string(raw)
	}()
	<-held.reached
	b.Clock.Advance(6 * time.Minute)
	close(held.release)
	if got := <-answer; !strings.Contains(got, "token_revoked") {
		t.Errorf("the proposal after its grant ended: %.300s, want refused with token_revoked", got)
	}
	var n int
	if err := b.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM invocations WHERE task_id = $1`, task["id"]).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d invocations (%v) recorded after the grant ended, want none", n, err)
	}
}
