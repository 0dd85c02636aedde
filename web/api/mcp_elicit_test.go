package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"countersign/web/webtest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign/internal/controlplane"
)

// elicitingClient is an MCP client that declared URL-mode elicitation (or
// not, with urlMode false) and records the elicitations it was asked to
// open, answering each with answer.
type elicitingClient struct {
	mu     sync.Mutex
	asked  []*mcp.ElicitParams
	answer string
}

func (e *elicitingClient) connect(t *testing.T, b *webtest.Stack, task, version string, urlMode bool) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if urlMode {
		opts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}
		opts.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.asked = append(e.asked, r.Params)
			return &mcp.ElicitResult{Action: e.answer}, nil
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "eliciting-assistant", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: b.Server.URL + "/mcp?task=" + task,
		HTTPClient: &http.Client{Transport: bearerTransport{key: b.Key}}, DisableStandaloneSSE: true, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	return cs
}

// modelSees is what a tool result puts before the model: its text and
// its structured content.
func modelSees(t *testing.T, res *mcp.CallToolResult) (string, map[string]any) {
	t.Helper()
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	raw, _ := json.Marshal(res.StructuredContent)
	text.Write(raw)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil || res.IsError {
		t.Fatalf("tool result %s (error %v): %v", raw, res.IsError, err)
	}
	return text.String(), out
}

// TestMCPConfirmationPageGoesToTheClient: under both protocol versions
// with URL-mode elicitation (2025-11-25, and the newer multi round-trip one
// the SDK offers), a proposal that waits for the customer hands the
// confirmation page to the client as a URL elicitation, and the result the
// model reads has no link, only that the customer was asked. The page is
// the API's next.url, not pre-authenticated: it still asks for the
// customer's proof. A client without the capability keeps next.url.
func TestMCPConfirmationPageGoesToTheClient(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	b.StageForCustomer(t, "change_shipping_address")
	newest := mcp.SupportedProtocolVersions()[0]
	if newest <= "2025-11-25" {
		t.Fatalf("the SDK offers no protocol newer than 2025-11-25: %v", mcp.SupportedProtocolVersions())
	}
	actions := []string{"change_shipping_address"}
	propose := func(cs *mcp.ClientSession, line1 string) (*mcp.CallToolResult, error) {
		order := matOrder(t, b)
		return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "propose_change_shipping_address", Arguments: map[string]any{
			"order_id": order, "address": map[string]any{"name": "Jordan Lee", "line1": line1, "city": "Oakland", "postal_code": "94607", "country": "US"},
			"summary": "Ship to " + line1}})
	}
	// apiLink is the invocation's next.url as the API shows it.
	apiLink := func(id string) string {
		res := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id, nil).Want(t, http.StatusOK)
		link, _ := res.JSON["next"].(map[string]any)["url"].(string)
		if !strings.HasPrefix(link, b.Server.URL+"/c/") {
			t.Fatalf("the API's next.url = %q, want a confirmation link", link)
		}
		return link
	}
	// checkPage opens the page as the customer's browser would: it shows
	// the request and asks for proof before any confirm form.
	checkPage := func(link string) {
		page := b.Client(t).Get(strings.TrimPrefix(link, b.Server.URL))
		if page.StatusCode != http.StatusOK {
			t.Fatalf("the elicited page: %d", page.StatusCode)
		}
		if n := page.Doc(t).Find(`form[action$="/confirm"]`).Length(); n != 0 {
			t.Errorf("the elicited page has %d confirm forms before any proof: it must not be pre-authenticated", n)
		}
	}
	noLink := func(version, seen string, out map[string]any, want string) {
		t.Helper()
		next := out["next"].(map[string]any)
		if strings.Contains(seen, "/c/") || next["url"] != "" || next["kind"] != "confirm" || next["elicitation"] != want {
			t.Errorf("%s: the model reads %s, want next without a link and elicitation %q", version, seen, want)
		}
		// Only what is known: "opened" when the client said it was accepted,
		// "given … to offer" when it was only handed over.
		says := map[string]string{"accepted": "their app opened the confirmation page", "sent": "was given the confirmation page to offer them",
			"declined": "did not open it", "cancelled": "did not open it"}[want]
		if msg := next["message"].(string); says == "" || !strings.Contains(msg, says) {
			t.Errorf("%s: next.message %q does not say %q", version, msg, says)
		}
	}

	t.Run("multi round-trip", func(t *testing.T) {
		task := b.NewTask(t, b.Key, "conv-elicit-mrtr", actions)["id"].(string)
		e := &elicitingClient{answer: "accept"}
		cs := e.connect(t, b, task, newest, true)
		res, err := propose(cs, "2 Harbour Way")
		if err != nil {
			t.Fatal(err)
		}
		seen, out := modelSees(t, res)
		noLink(newest, seen, out, "accepted")
		id := out["id"].(string)
		if len(e.asked) != 1 {
			t.Fatalf("the client was asked %d times, want once: %+v", len(e.asked), e.asked)
		}
		if got := e.asked[0]; got.Mode != "url" || got.URL != apiLink(id) || got.Message == "" {
			t.Errorf("elicitation %+v, want mode url with the invocation's page %s", got, apiLink(id))
		}
		checkPage(e.asked[0].URL)
		if b.Invocation(t, id).State != controlplane.AwaitingConfirmation {
			t.Errorf("the invocation is %s, want awaiting the customer", b.Invocation(t, id).State)
		}
		// get_invocation keeps the link from the model too.
		res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_invocation", Arguments: map[string]any{"invocation_id": id}})
		if err != nil {
			t.Fatal(err)
		}
		if seen, _ := modelSees(t, res); strings.Contains(seen, "/c/") {
			t.Errorf("get_invocation shows the model the link: %s", seen)
		}

		// A customer who declines to open the page: the model is told so,
		// still without the link.
		d := &elicitingClient{answer: "decline"}
		task2 := b.NewTask(t, b.Key, "conv-elicit-decline", actions)["id"].(string)
		res, err = propose(d.connect(t, b, task2, newest, true), "3 Harbour Way")
		if err != nil {
			t.Fatal(err)
		}
		seen, out = modelSees(t, res)
		if next := out["next"].(map[string]any); strings.Contains(seen, "/c/") || next["elicitation"] != "declined" {
			t.Errorf("declined: the model reads %s", seen)
		}
	})

	t.Run("requestState is checked", func(t *testing.T) {
		// A client that runs the round trip itself, and echoes a state of
		// its own choosing: another task's invocation answers like a
		// missing one.
		task := b.NewTask(t, b.Key, "conv-elicit-state", actions)["id"].(string)
		client := mcp.NewClient(&mcp.Implementation{Name: "manual-mrtr", Version: "1"}, &mcp.ClientOptions{
			Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
		cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: b.Server.URL + "/mcp?task=" + task,
			HTTPClient: &http.Client{Transport: bearerTransport{key: b.Key}}, DisableStandaloneSSE: true, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: newest})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		params := &mcp.CallToolParams{Name: "propose_change_shipping_address", Arguments: map[string]any{"order_id": matOrder(t, b),
			"address": map[string]any{"name": "Jordan Lee", "line1": "6 Harbour Way", "city": "Oakland", "postal_code": "94607", "country": "US"}}}
		first, err := cs.CallTool(context.Background(), params)
		if err != nil || !first.NeedsInput() || first.RequestState == "" {
			t.Fatalf("first round: %v %+v, want an input-required result", err, first)
		}
		other := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations", map[string]any{"action": "change_shipping_address",
			"args": map[string]any{"order_id": matOrder(t, b), "address": webtest.JordanAddress}}).Want(t, http.StatusCreated).JSON["id"].(string)
		for state, wantErr := range map[string]bool{other: true, "inv_nope": true, first.RequestState: false} {
			retry := *params
			retry.RequestState = state
			retry.InputResponses = mcp.InputResponseMap{"customer_confirmation": &mcp.ElicitResult{Action: "accept"}}
			res, err := cs.CallTool(context.Background(), &retry)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(res.StructuredContent)
			if res.IsError != wantErr || (wantErr && !strings.Contains(string(raw), `"not_found"`)) {
				t.Errorf("requestState %s: error %v %s, want error %v", state, res.IsError, raw, wantErr)
			}
		}
	})

	t.Run("2025-11-25", func(t *testing.T) {
		task := b.NewTask(t, b.Key, "conv-elicit-legacy", actions)["id"].(string)
		e := &elicitingClient{answer: "accept"}
		cs := e.connect(t, b, task, "2025-11-25", true)
		_, err := propose(cs, "4 Harbour Way")
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeURLElicitationRequired {
			t.Fatalf("a proposal awaiting the customer answered %v, want the JSON-RPC error -32042", err)
		}
		var data struct {
			Elicitations []*mcp.ElicitParams `json:"elicitations"`
			InvocationID string              `json:"invocation_id"`
		}
		if err := json.Unmarshal(rpcErr.Data, &data); err != nil || len(data.Elicitations) != 1 {
			t.Fatalf("-32042 data %s: %v", rpcErr.Data, err)
		}
		el := data.Elicitations[0]
		if el.Mode != "url" || el.URL != apiLink(data.InvocationID) || el.ElicitationID != data.InvocationID || el.Message == "" {
			t.Errorf("elicitation %+v, want mode url, the invocation's page and its id", el)
		}
		if strings.Contains(rpcErr.Message, "/c/") {
			t.Errorf("the error's message, which the model may read, has the link: %q", rpcErr.Message)
		}
		checkPage(el.URL)
		// The client's retry, once its user has been to the page, reads the
		// same invocation without the link.
		res, err := propose(cs, "4 Harbour Way")
		if err != nil {
			t.Fatal(err)
		}
		seen, out := modelSees(t, res)
		noLink("2025-11-25", seen, out, "sent")
		if out["id"] != data.InvocationID {
			t.Errorf("the retry read %v, want %s", out["id"], data.InvocationID)
		}
	})

	for _, version := range []string{"2025-11-25", newest} {
		t.Run("no capability "+version, func(t *testing.T) {
			task := b.NewTask(t, b.Key, "conv-no-elicit-"+version, actions)["id"].(string)
			cs := (&elicitingClient{}).connect(t, b, task, version, false)
			res, err := propose(cs, "5 Harbour Way "+version)
			if err != nil {
				t.Fatal(err)
			}
			_, out := modelSees(t, res)
			next := out["next"].(map[string]any)
			if next["url"] != apiLink(out["id"].(string)) || next["elicitation"] != nil {
				t.Errorf("without URL elicitation next = %v, want the link in next.url", next)
			}
		})
	}
}

// matOrder finds Jordan Lee's yoga mat order with the read tool.
func matOrder(t *testing.T, b *webtest.Stack) string {
	t.Helper()
	orders := b.Call(t, b.Key, http.MethodPost, "/api/v1/tools/list_orders", map[string]any{"task": b.TaskID(), "args": map[string]any{}}).Want(t, http.StatusOK)
	for _, o := range orders.JSON["data"].([]any) {
		if m := o.(map[string]any); strings.Contains(m["display"].(string), "mat") {
			return m["order_id"].(string)
		}
	}
	t.Fatalf("no mat order in %v", orders.JSON)
	return ""
}
