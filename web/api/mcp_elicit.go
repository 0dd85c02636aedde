package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/internal/controlplane"
)

// The customer's confirmation page, handed to the MCP client rather than to
// the model: a client that declared URL-mode elicitation opens the page for
// its user, and the tool result the model reads carries no link. The page is
// the same as next.url's: it shows the request and still asks the customer
// to prove who they are (an e-mailed code, their account or the business's
// assertion) before their yes counts, so the URL is never pre-authenticated
// and a link that reached someone else confirms nothing.
//
// How the page reaches the client depends on the protocol version:
//   - 2026-07-28 and later (multi round-trip requests): propose_ answers an
//     input-required result whose elicitation/create (mode "url") carries the
//     page and whose requestState names the invocation; the client's retry
//     reads that invocation (its own, in this task, of this action) and
//     answers it without the link, saying what the customer did.
//   - 2025-11-25: the server is stateless and cannot send elicitation/create,
//     so a new proposal awaiting the customer answers the JSON-RPC error
//     -32042 (URLElicitationRequired) with the page in data.elicitations, as
//     the spec provides for a request that cannot go on until the user has
//     been to a URL; the client's retry (the same call, which the control
//     plane recognises as the same request) answers the invocation without
//     the link.
//
// Clients that declared no URL elicitation keep next.url.

// elicitKey is the key of the confirmation page in an input-required
// result's inputRequests.
const elicitKey = "customer_confirmation"

// mcpSessionPrefix starts the Mcp-Session-Id minted at initialize under
// protocol 2025-11-25. The server keeps no session: the id only carries, to
// whichever console instance serves the next call, whether the client
// declared URL elicitation ("u") or not ("n"), plus randomness. A client
// that alters it changes only how its own links reach it.
const mcpSessionPrefix = "cs1"

// mintSessionID is the Mcp-Session-Id for a client that declared urlMode
// (or not) at initialize.
func mintSessionID(urlMode bool) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	flag := "n"
	if urlMode {
		flag = "u"
	}
	return mcpSessionPrefix + flag + hex.EncodeToString(b[:])
}

// sessionDeclaresURL reads a minted Mcp-Session-Id.
func sessionDeclaresURL(id string) bool {
	return strings.HasPrefix(id, mcpSessionPrefix+"u")
}

// initializeDeclaresURL reports whether body is an initialize request whose
// client declared URL-mode elicitation.
func initializeDeclaresURL(body []byte) (initialize, urlMode bool) {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Capabilities struct {
				Elicitation *struct {
					URL *json.RawMessage `json:"url"`
				} `json:"elicitation"`
			} `json:"capabilities"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "initialize" {
		return false, false
	}
	e := msg.Params.Capabilities.Elicitation
	return true, e != nil && e.URL != nil
}

// multiRoundTrip reports whether the call follows protocol 2026-07-28 or
// later, where the server asks the client for input in its result.
func multiRoundTrip(r *mcp.CallToolRequest) bool { return r.ProtocolVersion() >= "2026-07-28" }

// urlElicitation reports whether the calling client declared URL-mode
// elicitation: in the call's _meta (2026-07-28 and later) or at initialize
// (2025-11-25, carried by the minted session id).
func urlElicitation(req mcpRequest, r *mcp.CallToolRequest) bool {
	if multiRoundTrip(r) {
		caps := r.ClientCapabilities()
		return caps != nil && caps.Elicitation != nil && caps.Elicitation.URL != nil
	}
	return req.urlElicitation && r.ProtocolVersion() >= "2025-11-25"
}

// confirmationElicitation is the URL-mode elicitation of inv's page.
func confirmationElicitation(inv controlplane.Invocation, link string, withID bool) *mcp.ElicitParams {
	what := strings.TrimSuffix(strings.TrimSpace(inv.Quote.Title), ".")
	if what == "" {
		what = "your request"
	}
	p := &mcp.ElicitParams{Mode: "url", URL: link,
		Message: "Please check and confirm " + what + ". The page shows exactly what will change; nothing happens until you " +
			"confirm there, after proving it is you."}
	if withID {
		p.ElicitationID = inv.ID
	}
	return p
}

// Values of next.elicitation: how the confirmation page reached the
// customer when it went to their client instead of to the model.
const (
	elicitationAccepted  = "accepted"  // the customer agreed to open it
	elicitationDeclined  = "declined"  // they chose not to
	elicitationCancelled = "cancelled" // they dismissed it
	elicitationSent      = "sent"      // their client was given it (2025-11-25)
)

// withoutLink is out with the link taken off next, for a client that
// received the page as an elicitation: the model is told the customer was
// asked, and how they answered when the client says.
func withoutLink(out invocationJSON, how string) invocationJSON {
	if out.Next.Kind != "confirm" {
		return out
	}
	out.Next.URL = ""
	out.Next.Elicitation = how
	switch how {
	case elicitationDeclined, elicitationCancelled:
		out.Next.Message = "The customer's app offered them the confirmation page and they did not open it. Nothing happens unless " +
			"they confirm. Ask whether they still want this; proposing it again offers the page again. You never see the link."
	case elicitationAccepted:
		out.Next.Message = "The customer was asked: their app opened the confirmation page for them (you do not see the link). " +
			"Nothing happens until they confirm there, after proving who they are. Read the invocation again later."
	default:
		// Sent is not seen: the client was handed the page, and whether it
		// showed it is not known here.
		out.Next.Message = "The customer's app was given the confirmation page to offer them (you do not see the link); " +
			"whether they opened it is not known. Nothing happens until they confirm there, after proving who they are. " +
			"Read the invocation again later, and ask the customer if it stays waiting."
	}
	return out
}

// elicitedAction is the customer's answer to the page's elicitation in a
// retried call.
func elicitedAction(r *mcp.CallToolRequest) string {
	res, ok := r.Params.InputResponses[elicitKey].(*mcp.ElicitResult)
	if !ok {
		return elicitationSent
	}
	switch res.Action {
	case "accept":
		return elicitationAccepted
	case "decline":
		return elicitationDeclined
	default:
		return elicitationCancelled
	}
}

// deliverProposal answers a propose_ call: the invocation as the API shows
// it, unless it awaits the customer and their client takes the page as an
// elicitation.
func (h *Handler) deliverProposal(req mcpRequest, r *mcp.CallToolRequest, inv controlplane.Invocation, out invocationJSON) (*mcp.CallToolResult, error) {
	if out.Next.Kind != "confirm" || out.Next.URL == "" || !urlElicitation(req, r) {
		return toolResult(out), nil
	}
	if multiRoundTrip(r) {
		// Asked on every first round, a repeated proposal included: the
		// model proposing again is how the page is offered again.
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{elicitKey: confirmationElicitation(inv, out.Next.URL, false)},
			RequestState: inv.ID}, nil
	}
	if inv.Deduplicated {
		// The client's retry after -32042 (or the model asking again within
		// the dedup window): the customer was already given the page.
		return toolResult(withoutLink(out, elicitationSent)), nil
	}
	return nil, urlElicitationRequired(inv, out)
}

// urlElicitationRequired is the -32042 error of protocol 2025-11-25. Its
// message, which a client may show the model, has no link; data has the
// elicitation the client opens for its user, and the invocation's id.
func urlElicitationRequired(inv controlplane.Invocation, out invocationJSON) error {
	data, _ := json.Marshal(map[string]any{
		"elicitations":  []*mcp.ElicitParams{confirmationElicitation(inv, out.Next.URL, true)},
		"invocation_id": inv.ID,
	})
	return &jsonrpc.Error{Code: mcp.CodeURLElicitationRequired, Data: data,
		Message: "The customer must confirm this on a page, which their app was asked to open for them (invocation " + inv.ID +
			"). Nothing happens until they confirm there. Call the tool again, or get_invocation, to read where it stands."}
}

// elicitedInvocation reads the invocation a retried propose_ call's
// requestState names. The state is the client's to echo and is checked as
// an id the caller sent: the assistant's own invocation, in the call's task,
// of this tool's action; anything else answers like a missing one, so a
// changed state reaches nothing the caller could not read with
// get_invocation.
func (h *Handler) elicitedInvocation(ctx context.Context, req mcpRequest, task controlplane.Task, t assistants.Tool, state string) (controlplane.Invocation, error) {
	inv, _, err := h.cfg.Assistants.Invocation(ctx, req.assistant, state)
	if err != nil {
		return controlplane.Invocation{}, err
	}
	if inv.TaskID != task.ID || inv.System != t.System || inv.Action != t.Name {
		return controlplane.Invocation{}, apperr.New(apperr.NotFound, "No such proposal for this call.")
	}
	return inv, nil
}
