package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/internal/authserver"
	"countersign/web/kit"
)

// The console is the OAuth 2.1 authorization server of its MCP resource
// (internal/authserver): its metadata, and the endpoints client programs
// call. The consent page is the console's (web/console).

// oauthRoutes are the authorization server's lines of the route table;
// none when it is off.
func (h *Handler) oauthRoutes() []kit.Route {
	if h.cfg.AuthServer == nil {
		return nil
	}
	routes := []kit.Route{
		kit.GET("/.well-known/oauth-protected-resource", h.handleResourceMetadata, kit.Anyone),
		kit.GET("/.well-known/oauth-protected-resource/mcp", h.handleResourceMetadata, kit.Anyone),
		kit.GET("/.well-known/oauth-authorization-server", h.handleServerMetadata, kit.Anyone),
		kit.POST("/oauth/register", h.handleOAuthRegister, kit.OAuthClient),
		kit.POST("/oauth/token", h.handleOAuthToken, kit.OAuthClient),
		kit.POST("/oauth/revoke", h.handleOAuthRevoke, kit.OAuthClient),
	}
	// A client in a browser page (the MCP Inspector's) asks first.
	for _, r := range routes[:len(routes):len(routes)] {
		routes = append(routes, kit.Route{Method: http.MethodOptions, Path: r.Path, Handler: handleOAuthPreflight, Allow: kit.OAuthClient})
	}
	return routes
}

// handleOAuthPreflight answers a browser's CORS preflight of the metadata
// and client endpoints: any origin may call them, without cookies (what a
// client presents is its proof, not a session).
func handleOAuthPreflight(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, MCP-Protocol-Version")
	h.Set("Access-Control-Max-Age", "600")
	return c.NoContent(http.StatusNoContent)
}

// anyOrigin lets a page of any origin read the answer (no cookies are
// involved).
func anyOrigin(c echo.Context) { c.Response().Header().Set("Access-Control-Allow-Origin", "*") }

func (h *Handler) issuer(c echo.Context) string {
	return authserver.Issuer(h.cfg.PublicBase, c.Request())
}

// handleResourceMetadata answers GET /.well-known/oauth-protected-resource
// (and its /mcp form): the MCP server's protected-resource metadata
// (RFC 9728), naming the console as its authorization server.
func (h *Handler) handleResourceMetadata(c echo.Context) error {
	iss := h.issuer(c)
	anyOrigin(c)
	return c.JSON(http.StatusOK, map[string]any{
		"resource": authserver.Resource(iss), "authorization_servers": []string{iss},
		"bearer_methods_supported": []string{"header"}, "resource_name": "Countersign MCP server",
		"resource_documentation": iss + "/api/v1/openapi.json"})
}

// handleServerMetadata answers GET /.well-known/oauth-authorization-server
// (RFC 8414).
func (h *Handler) handleServerMetadata(c echo.Context) error {
	iss := h.issuer(c)
	anyOrigin(c)
	return c.JSON(http.StatusOK, map[string]any{
		"issuer":                                         iss,
		"authorization_endpoint":                         iss + "/oauth/authorize",
		"token_endpoint":                                 iss + "/oauth/token",
		"registration_endpoint":                          iss + "/oauth/register",
		"revocation_endpoint":                            iss + "/oauth/revoke",
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"revocation_endpoint_auth_methods_supported":     []string{"none"},
		"authorization_response_iss_parameter_supported": true,
		"client_id_metadata_document_supported":          true,
	})
}

// registrationsPerMinute is how many clients one address (an IPv6 /64
// counting as one, accounts.SourceOf) may register a minute (and in a
// burst): a client registers once per installation.
const registrationsPerMinute = 10

// handleOAuthRegister answers POST /oauth/register: dynamic client
// registration (RFC 7591), 201 with the client's id; past
// registrationsPerMinute from one address, 429 with Retry-After.
func (h *Handler) handleOAuthRegister(c echo.Context) error {
	anyOrigin(c)
	if err := h.registrations.allow("register:"+accounts.SourceOf(c.RealIP()), h.Now()); err != nil {
		var e *apperr.Error
		if errors.As(err, &e) {
			c.Response().Header().Set("Retry-After", strconv.Itoa(e.RetryAfterSeconds))
		}
		return oauthJSON(c, &authserver.Error{Code: "slow_down", Status: http.StatusTooManyRequests,
			Description: "Too many registrations from this address; wait a minute. A client registers once, then keeps its client_id."})
	}
	var r authserver.Registration
	if err := c.Bind(&r); err != nil {
		return oauthJSON(c, &authserver.Error{Code: "invalid_client_metadata", Description: "The body must be a JSON object.", Status: http.StatusBadRequest})
	}
	out, err := h.cfg.AuthServer.Register(c.Request().Context(), r)
	if err != nil {
		return oauthJSON(c, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusCreated, out)
}

// handleOAuthToken answers POST /oauth/token: a code or a refresh token
// exchanged for tokens.
func (h *Handler) handleOAuthToken(c echo.Context) error {
	anyOrigin(c)
	form, err := c.FormParams()
	if err != nil {
		return oauthJSON(c, &authserver.Error{Code: "invalid_request", Description: "The body must be a form.", Status: http.StatusBadRequest})
	}
	out, err := h.cfg.AuthServer.Token(c.Request().Context(), form, authserver.Resource(h.issuer(c)))
	if err != nil {
		return oauthJSON(c, err)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, out)
}

// handleOAuthRevoke answers POST /oauth/revoke (RFC 7009): 200 whether or
// not the token was known.
func (h *Handler) handleOAuthRevoke(c echo.Context) error {
	anyOrigin(c)
	form, err := c.FormParams()
	if err != nil {
		return oauthJSON(c, &authserver.Error{Code: "invalid_request", Description: "The body must be a form.", Status: http.StatusBadRequest})
	}
	if err := h.cfg.AuthServer.Revoke(c.Request().Context(), form); err != nil {
		return oauthJSON(c, err)
	}
	return c.NoContent(http.StatusOK)
}

// oauthJSON answers err as the OAuth specifications' JSON error; an error
// of the console's own is a server_error that says nothing more.
func oauthJSON(c echo.Context, err error) error {
	var e *authserver.Error
	if !errors.As(err, &e) {
		c.Logger().Error(err)
		e = &authserver.Error{Code: "server_error", Description: "The request could not be completed; try again.", Status: http.StatusInternalServerError}
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(e.Status, e)
}

// bearerChallenge is the WWW-Authenticate of a 401 from a bearer route:
// it points clients at the MCP server's protected-resource metadata
// (RFC 9728 §5.1), where they discover how to get a token; an error
// (RFC 6750 §3) when a credential was presented and refused.
func (h *Handler) bearerChallenge(c echo.Context, errCode, description string) {
	v := `Bearer realm="countersign"`
	if h.cfg.AuthServer != nil {
		v += `, resource_metadata="` + authserver.ResourceMetadataURL(h.issuer(c)) + `"`
	}
	if errCode != "" {
		v += `, error="` + errCode + `"`
		if description != "" {
			v += `, error_description="` + strings.ReplaceAll(description, `"`, `'`) + `"`
		}
	}
	c.Response().Header().Set("WWW-Authenticate", v)
}

// tokenAssistant is the assistant an OAuth access token acts as, for the
// resource of the route (only /mcp is one), and the key of its rate
// limit (one bucket per grant).
func (h *Handler) tokenAssistant(c echo.Context, token string) (assistants.Assistant, string, error) {
	resource := authserver.Resource(h.issuer(c))
	if c.Path() != mcpPath {
		resource = h.issuer(c) + c.Path()
	}
	acc, err := h.cfg.AuthServer.Verify(c.Request().Context(), token, resource)
	var e *authserver.Error
	if errors.As(err, &e) {
		h.bearerChallenge(c, e.Code, e.Description)
		return assistants.Assistant{}, "", &apperr.Error{Kind: apperr.Unauthenticated, Code: e.Code, Message: e.Description,
			Hint: "Get a new access token from the console (refresh it, or connect again): see " + authserver.ResourceMetadataURL(h.issuer(c)) + "."}
	}
	if err != nil {
		return assistants.Assistant{}, "", err
	}
	var actsFor int64
	if acc.ActsAsUser {
		actsFor = acc.UserID
	}
	a, err := h.cfg.Assistants.ForToken(c.Request().Context(), acc.AssistantID, actsFor, acc.UserName)
	if apperr.Is(err, apperr.Unauthenticated) {
		h.bearerChallenge(c, "invalid_token", "")
	}
	a.GrantID = acc.GrantID
	return a, "grant:" + acc.GrantID, err
}
