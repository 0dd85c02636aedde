package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
)

// route is one line of the route table: every route says who may use it.
type route struct {
	method  string
	path    string
	handler echo.HandlerFunc
	allow   Access
}

// routes is the console's whole URL space. A route added anywhere else has
// no access rule, and the role-matrix test fails on it.
func (s *Server) routes() []route {
	admin := Only(accounts.Admin)
	staff := Only(accounts.Agent, accounts.Manager, accounts.Admin)
	managers := Only(accounts.Manager, accounts.Admin)
	return []route{
		{http.MethodGet, "/healthz", s.handleHealthz, Anyone},
		{http.MethodGet, "/readyz", s.handleReadyz, Anyone},
		{http.MethodGet, "/static/*", s.handleStatic, Anyone},

		{http.MethodGet, "/sign-in", s.handleSignInForm, Anyone},
		{http.MethodPost, "/sign-in", s.handleSignIn, Anyone},
		// Anyone: a customer who proved who they are on a link page signs
		// out here too; the handler answers 401 to a visitor with neither.
		{http.MethodPost, "/sign-out", s.handleSignOut, Anyone},
		{http.MethodGet, "/", s.handleHome, SignedIn},
		{http.MethodGet, "/account/password", s.handlePasswordForm, SignedIn},
		{http.MethodPost, "/account/password", s.handlePasswordChange, SignedIn},

		{http.MethodGet, "/systems", s.handleSystems, staff},

		// The manager's pages: action-outcome metrics and policies.
		{http.MethodGet, "/metrics", s.handleMetrics, managers},
		{http.MethodGet, "/metrics/:file", s.handleMetricsCSV, managers},
		{http.MethodGet, "/policies", s.handlePolicies, managers},
		{http.MethodGet, "/policies/:system/:action", s.handlePolicyForm, managers},
		{http.MethodPost, "/policies/:system/:action", s.handlePolicyChange, managers},

		// The support agent's console: approval queue, tasks, hand-offs.
		{http.MethodGet, "/queue", s.handleQueue, staff},
		{http.MethodPost, "/queue/bulk", s.handleQueueBulk, staff},
		{http.MethodPost, "/queue/bulk/approve", s.handleQueueBulkApprove, staff},
		{http.MethodGet, "/queue/:id", s.handleQueueCard, staff},
		{http.MethodPost, "/queue/:id/claim", s.handleQueueClaim, staff},
		{http.MethodPost, "/queue/:id/approve", s.handleQueueApprove, staff},
		{http.MethodPost, "/queue/:id/reject", s.handleQueueReject, staff},
		{http.MethodPost, "/queue/:id/send-back", s.handleQueueSendBack, staff},
		{http.MethodPost, "/queue/:id/edit", s.handleQueueEdit, staff},
		{http.MethodPost, "/queue/:id/requote", s.handleQueueRequote, staff},
		{http.MethodGet, "/tasks", s.handleTasks, staff},
		{http.MethodGet, "/tasks/:id", s.handleTask, staff},
		{http.MethodGet, "/tasks/:id/live", s.handleTaskLive, staff},
		{http.MethodGet, "/tasks/:id/events", s.handleTaskEvents, staff},
		{http.MethodPost, "/tasks/:id/pause", s.handleTaskPause, staff},
		{http.MethodPost, "/tasks/:id/resume", s.handleTaskResume, staff},
		{http.MethodPost, "/tasks/:id/cancel", s.handleTaskCancel, staff},
		{http.MethodPost, "/tasks/:id/blocks/lift", s.handleTaskBlockLift, Only(accounts.Agent, accounts.Admin)},
		{http.MethodPost, "/invocations/:id/reconcile", s.handleInvocationReconcile, staff},
		{http.MethodPost, "/invocations/:id/reverse", s.handleInvocationReverse, staff},
		{http.MethodPost, "/controls/global-stop", s.handleGlobalStop, admin},
		{http.MethodGet, "/handoffs", s.handleHandoffs, staff},
		{http.MethodPost, "/handoffs/:id/take", s.handleHandoffTake, staff},

		// The customer's confirmation page: a link session or a customer
		// account; the handlers check the request is this customer's.
		{http.MethodGet, "/c/:token", s.handleConfirmationLink, Anyone},
		{http.MethodPost, "/c/:token/code", s.handleConfirmationCode, Anyone},
		{http.MethodPost, "/c/:token/verify", s.handleConfirmationVerify, Anyone},
		// Anyone reaches it; the handler lists only the customer this
		// browser proved it is (an account or a link's proof), never on a link alone.
		{http.MethodGet, "/requests", s.handleMyRequests, Anyone},
		{http.MethodGet, "/requests/:id", s.handleCustomerRequest, Anyone},
		{http.MethodGet, "/requests/:id/status", s.handleCustomerRequestStatus, Anyone},
		{http.MethodPost, "/requests/:id/confirm", s.handleCustomerConfirm, Anyone},
		{http.MethodPost, "/requests/:id/decline", s.handleCustomerDecline, Anyone},
		{http.MethodPost, "/requests/:id/stop", s.handleCustomerStop, Anyone},

		{http.MethodGet, "/admin/users", s.handleAdminUsers, admin},
		{http.MethodPost, "/admin/users", s.handleAdminUserCreate, admin},
		{http.MethodPost, "/admin/users/:id/role", s.handleAdminUserRole, admin},
		{http.MethodPost, "/admin/users/:id/disable", s.handleAdminUserDisable, admin},
		{http.MethodPost, "/admin/users/:id/enable", s.handleAdminUserEnable, admin},

		{http.MethodGet, "/admin/assistants", s.handleAdminAssistants, admin},
		{http.MethodPost, "/admin/assistants", s.handleAdminAssistantCreate, admin},
		{http.MethodPost, "/admin/assistants/:id/keys", s.handleAdminAssistantKeyCreate, admin},
		{http.MethodPost, "/admin/assistants/:id/actions", s.handleAdminAssistantActions, admin},
		{http.MethodPost, "/admin/assistants/:id/grants", s.handleAdminAssistantGrants, admin},
		{http.MethodPost, "/admin/assistants/:id/disable", s.handleAdminAssistantDisable, admin},
		{http.MethodPost, "/admin/assistants/:id/enable", s.handleAdminAssistantEnable, admin},
		{http.MethodPost, "/admin/keys/:id/revoke", s.handleAdminKeyRevoke, admin},
		{http.MethodPost, "/admin/assistants/:id/webhook", s.handleAdminWebhookRegister, admin},
		{http.MethodPost, "/admin/assistants/:id/webhook/remove", s.handleAdminWebhookRemove, admin},
		{http.MethodPost, "/admin/assistants/:id/deliveries/:delivery/resend", s.handleAdminWebhookResend, admin},

		// The assistant's side: the JSON API and the MCP server (bearer keys).
		{http.MethodGet, "/api/v1/openapi.json", s.handleOpenAPI, Anyone},
		{http.MethodGet, "/api/v1/tools", s.handleAPITools, APIKey},
		{http.MethodPost, "/api/v1/tools/:name", s.handleAPIToolCall, APIKey},
		{http.MethodPost, "/api/v1/tasks", s.handleAPITaskCreate, APIKey},
		{http.MethodGet, "/api/v1/tasks/:id", s.handleAPITask, APIKey},
		{http.MethodPost, "/api/v1/tasks/:id/pause", s.handleAPITaskPause, APIKey},
		{http.MethodPost, "/api/v1/tasks/:id/resume", s.handleAPITaskResume, APIKey},
		{http.MethodPost, "/api/v1/tasks/:id/cancel", s.handleAPITaskCancel, APIKey},
		{http.MethodPost, "/api/v1/tasks/:id/invocations", s.handleAPIPropose, APIKey},
		{http.MethodGet, "/api/v1/invocations/:id", s.handleAPIInvocation, APIKey},
		{http.MethodPost, "/api/v1/invocations/:id/reconcile", s.handleAPIReconcile, APIKey},
		{http.MethodPost, "/api/v1/invocations/:id/reverse", s.handleAPIReverse, APIKey},
		{http.MethodPost, "/api/v1/conversations/:id/events", s.handleAPIConversationEvent, APIKey},
		{http.MethodPost, "/mcp", s.handleMCP, APIKey},
	}
}
