package api

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign/web/kit"
)

// The HTTP side of /mcp as stock clients and the transport spec expect,
// checked before the SDK sees the request: the Origin of a browser's
// request (DNS-rebinding protection), the MCP-Protocol-Version header, and
// methods the server does not have, each answered in JSON-RPC.

// mcpMethods are the methods the MCP server answers (the SDK's server
// methods). A call of any other is a JSON-RPC -32601 in JSON, and a
// notification of another is accepted and ignored, as JSON-RPC says.
var mcpMethods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true,
	"tools/list": true, "tools/call": true, "prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "subscriptions/listen": true,
	"completion/complete": true, "logging/setLevel": true,
	"notifications/initialized": true, "notifications/cancelled": true,
	"notifications/progress": true, "notifications/roots/list_changed": true,
}

// jsonRPCError answers status with a JSON-RPC error (id null unless given).
func jsonRPCError(c echo.Context, status int, id json.RawMessage, code int64, message string, data any) error {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body := map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}}
	if data != nil {
		body["error"].(map[string]any)["data"] = data
	}
	return c.JSON(status, body)
}

// checkMCPRequest answers what the SDK would refuse in plain text, or lets
// the request through (nil, false).
func (h *Handler) checkMCPRequest(c echo.Context, body []byte) (bool, error) {
	r := c.Request()
	if origin := r.Header.Get("Origin"); origin != "" && !h.originAllowed(origin, r.Host) {
		return true, jsonRPCError(c, http.StatusForbidden, nil, -32600, "Origin "+origin+" may not call this MCP server.",
			kit.APIError{Code: "origin_not_allowed", Message: "This origin may not call the MCP server.",
				Hint: "Browser clients must be served from the console's own address (-public-url) or an origin in -mcp-allowed-origins; " +
					"clients outside a browser send no Origin."})
	}
	if v := r.Header.Get("MCP-Protocol-Version"); v != "" && !slices.Contains(mcp.SupportedProtocolVersions(), v) {
		return true, jsonRPCError(c, http.StatusBadRequest, nil, mcp.CodeUnsupportedProtocolVersion,
			"Unsupported MCP-Protocol-Version "+v+".",
			mcp.UnsupportedProtocolVersionData{Supported: mcp.SupportedProtocolVersions(), Requested: v})
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method == nil || mcpMethods[*msg.Method] {
		return false, nil
	}
	if len(msg.ID) == 0 || string(msg.ID) == "null" {
		return true, c.NoContent(http.StatusAccepted)
	}
	// The SDK answers an unknown method 404 in JSON under 2026-07-28 and
	// later; under older versions a plain-text 400, which clients cannot
	// read as the call's answer. Both get the JSON-RPC error, with 200 for
	// the older versions, whose clients read a non-2xx answer as a broken
	// connection.
	status := http.StatusOK
	if r.Header.Get("MCP-Protocol-Version") >= "2026-07-28" {
		status = http.StatusNotFound
	}
	return true, jsonRPCError(c, status, msg.ID, -32601, "Method not found: "+*msg.Method+".", nil)
}

// originAllowed says whether a browser page of origin may call the MCP
// server reached as host: an origin configured (-mcp-allowed-origins, or
// -public-url's), or the page's own server when that is addressed by an IP
// literal or localhost. A same-origin request to any other name may be a
// DNS-rebinding page (its name now resolves here), so a name must be
// configured to be trusted.
func (h *Handler) originAllowed(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null", a file: page, garbage
	}
	norm := u.Scheme + "://" + strings.ToLower(u.Host)
	for _, o := range h.cfg.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), norm) {
			return true
		}
	}
	if !strings.EqualFold(u.Host, host) {
		return false
	}
	name := u.Hostname()
	return strings.EqualFold(name, "localhost") || net.ParseIP(name) != nil
}
