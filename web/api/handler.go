// Package api is the assistant's side of the console: the JSON API under
// /api/v1, its OpenAPI description, the MCP server at /mcp and the bodies of
// outcome webhooks. Every route takes an assistant's API key; none reads a
// session, and none links the pages people read.
package api

import (
	"context"
	"net/http"

	"countersign/internal/adapter"
	"countersign/internal/assistants"
	"countersign/internal/audit"
	"countersign/internal/authserver"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/receipts"
	"countersign/web/kit"
)

// Links reads the customer's confirmation link of an invocation awaiting
// their confirmation, made when it was routed to them (confirmation.Service).
type Links interface {
	LiveLink(ctx context.Context, invocationID string) (string, error)
	Accepts(system string) []confirmation.Proof
}

// Config is what the assistant's side needs.
type Config struct {
	Registry *adapter.Registry
	Control  *controlplane.Service
	// Confirmations reads the link shown to a customer; nil leaves links out.
	Confirmations Links
	// Assistants authenticates API keys and keeps the assistants' catalog;
	// nil turns every key away.
	Assistants *assistants.Service
	// RatePerMinute is each API key's request rate (and burst); zero means 120.
	RatePerMinute int
	// AllowedOrigins are the browser origins ("https://app.example.com")
	// that may call /mcp besides a page of the console's own address by IP
	// or localhost; a request with another Origin is a 403. Requests
	// without an Origin (clients outside a browser) are not affected.
	AllowedOrigins []string
	// Receipts signs the receipts of completed writes; nil signs with a key
	// of this process's own (receipts.Ephemeral).
	Receipts *receipts.Signer
	// PublicBase is the console's configured address (-public-url), the
	// receipts' issuer; empty leaves the issuer out.
	PublicBase string
	// AuthServer, when set, makes the console the OAuth authorization
	// server of /mcp (oauth.go): its metadata and client endpoints are
	// served, and /mcp takes its access tokens beside API keys.
	AuthServer *authserver.Service
	// Audit, when set, makes every receipt carry the trail's proof of its
	// write (a signed checkpoint and each leaf's inclusion proof); nil (no
	// audit key) issues receipts without one.
	Audit *audit.Log
}

// Handler serves the assistant's routes.
type Handler struct {
	*kit.Site
	cfg    Config
	limits *keyLimits // per-API-key rate limits
	// registrations bounds dynamic client registrations per client
	// address (oauth.go).
	registrations *keyLimits
	mcp           http.Handler // the MCP server at /mcp
	receipts      *receipts.Signer
}

// New builds the assistant's handlers on the shared plumbing.
func New(site *kit.Site, cfg Config) *Handler {
	h := &Handler{Site: site, cfg: cfg, limits: newKeyLimits(cfg.RatePerMinute), receipts: cfg.Receipts,
		registrations: newKeyLimits(registrationsPerMinute)}
	if h.receipts == nil {
		h.receipts = receipts.Ephemeral()
	}
	h.mcp = h.newMCPHandler()
	return h
}

// mcpPath is the address of the MCP server.
const mcpPath = "/mcp"

// CheckedHeaders are the request headers of the assistant's calls whose
// values reach the database.
var CheckedHeaders = []string{"Idempotency-Key", mcpTaskHeader}

// Routes is the assistant's part of the route table; every route but the
// OpenAPI description takes an API key, which Authorize checks.
func (h *Handler) Routes() []kit.Route {
	key := kit.APIKey
	return append(h.oauthRoutes(),
		kit.GET("/api/v1/openapi.json", h.handleOpenAPI, kit.Anyone),
		kit.GET("/api/v1/tools", h.handleAPITools, key),
		kit.POST("/api/v1/tools/:name", h.handleAPIToolCall, key),
		kit.POST("/api/v1/tasks", h.handleAPITaskCreate, key),
		kit.GET("/api/v1/tasks/:id", h.handleAPITask, key),
		kit.POST("/api/v1/tasks/:id/pause", h.handleAPITaskPause, key),
		kit.POST("/api/v1/tasks/:id/resume", h.handleAPITaskResume, key),
		kit.POST("/api/v1/tasks/:id/cancel", h.handleAPITaskCancel, key),
		kit.POST("/api/v1/tasks/:id/invocations", h.handleAPIPropose, key),
		kit.GET("/api/v1/invocations/:id", h.handleAPIInvocation, key),
		kit.POST("/api/v1/invocations/:id/reconcile", h.handleAPIReconcile, key),
		kit.POST("/api/v1/invocations/:id/reverse", h.handleAPIReverse, key),
		kit.GET("/api/v1/invocations/:id/receipt", h.handleAPIReceipt, key),
		kit.GET("/api/v1/receipts/jwks.json", h.handleReceiptKeys, kit.Anyone),
		kit.GET("/api/v1/conversations/:id", h.handleAPIConversation, key),
		kit.POST("/api/v1/conversations/:id/events", h.handleAPIConversationEvent, key),
		kit.POST(mcpPath, h.handleMCP, key),
	)
}
