// Package console is the staff's side: signing in, the approval queue, the
// task view and its actions, hand-offs, the connected systems, the
// manager's metrics and policies, and the admin's users, assistants and
// webhooks. Each route names the roles that may use it.
package console

import (
	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/assistants"
	"countersign/internal/controlplane"
	"countersign/internal/metrics"
	"countersign/internal/webhooks"
	"countersign/web/kit"
	"countersign/web/layout"
)

// Config is what the console needs.
type Config struct {
	Registry *adapter.Registry
	Control  *controlplane.Service
	// Assistants keeps the assistants' catalog and keys; nil leaves the
	// admin's assistants page empty.
	Assistants *assistants.Service
	// Metrics answers the manager's metrics pages.
	Metrics *metrics.Reports
	// Webhooks registers assistants' outcome endpoints and lists and resends
	// their deliveries; nil leaves outcome webhooks off the admin page.
	Webhooks *webhooks.Service
}

// Handler serves the console's routes.
type Handler struct {
	*layout.Frame
	cfg Config
	// tasks wakes live task pages on PostgreSQL notifications.
	tasks *taskWatch
}

// New builds the console's handlers on the pages' frame.
func New(frame *layout.Frame, cfg Config) *Handler {
	return &Handler{Frame: frame, cfg: cfg, tasks: newTaskWatch(cfg.Control, frame.Log)}
}

// Routes is the console's part of the route table.
func (s *Handler) Routes() []kit.Route {
	admin := kit.Only(accounts.Admin)
	staff := kit.Only(accounts.Agent, accounts.Manager, accounts.Admin)
	managers := kit.Only(accounts.Manager, accounts.Admin)
	get, post := kit.GET, kit.POST
	return []kit.Route{
		get("/sign-in", s.handleSignInForm, kit.Anyone),
		post("/sign-in", s.handleSignIn, kit.Anyone),
		// Anyone: a customer who proved who they are on a link page signs
		// out here too; the handler answers 401 to a visitor with neither.
		post("/sign-out", s.handleSignOut, kit.Anyone),
		get("/", s.handleHome, kit.SignedIn),
		get("/account/password", s.handlePasswordForm, kit.SignedIn),
		post("/account/password", s.handlePasswordChange, kit.SignedIn),

		get("/systems", s.handleSystems, staff),

		// The manager's pages: action-outcome metrics and policies.
		get("/metrics", s.handleMetrics, managers),
		get("/metrics/:file", s.handleMetricsCSV, managers),
		get("/policies", s.handlePolicies, managers),
		get("/policies/:system/:action", s.handlePolicyForm, managers),
		post("/policies/:system/:action", s.handlePolicyChange, managers),

		// The support agent's console: approval queue, tasks, hand-offs.
		get("/queue", s.handleQueue, staff),
		post("/queue/bulk", s.handleQueueBulk, staff),
		post("/queue/bulk/approve", s.handleQueueBulkApprove, staff),
		get("/queue/:id", s.handleQueueCard, staff),
		post("/queue/:id/claim", s.handleQueueClaim, staff),
		post("/queue/:id/approve", s.handleQueueApprove, staff),
		post("/queue/:id/reject", s.handleQueueReject, staff),
		post("/queue/:id/send-back", s.handleQueueSendBack, staff),
		post("/queue/:id/edit", s.handleQueueEdit, staff),
		post("/queue/:id/requote", s.handleQueueRequote, staff),
		get("/tasks", s.handleTasks, staff),
		get("/tasks/:id", s.handleTask, staff),
		get("/tasks/:id/live", s.handleTaskLive, staff),
		get("/tasks/:id/events", s.handleTaskEvents, staff),
		post("/tasks/:id/pause", s.handleTaskPause, staff),
		post("/tasks/:id/resume", s.handleTaskResume, staff),
		post("/tasks/:id/cancel", s.handleTaskCancel, staff),
		post("/tasks/:id/blocks/lift", s.handleTaskBlockLift, kit.Only(accounts.Agent, accounts.Admin)),
		post("/invocations/:id/reconcile", s.handleInvocationReconcile, staff),
		post("/invocations/:id/reverse", s.handleInvocationReverse, staff),
		post("/controls/global-stop", s.handleGlobalStop, admin),
		get("/handoffs", s.handleHandoffs, staff),
		post("/handoffs/:id/take", s.handleHandoffTake, staff),

		get("/admin/users", s.handleAdminUsers, admin),
		post("/admin/users", s.handleAdminUserCreate, admin),
		post("/admin/users/:id/role", s.handleAdminUserRole, admin),
		post("/admin/users/:id/disable", s.handleAdminUserDisable, admin),
		post("/admin/users/:id/enable", s.handleAdminUserEnable, admin),

		get("/admin/assistants", s.handleAdminAssistants, admin),
		post("/admin/assistants", s.handleAdminAssistantCreate, admin),
		post("/admin/assistants/:id/keys", s.handleAdminAssistantKeyCreate, admin),
		post("/admin/assistants/:id/actions", s.handleAdminAssistantActions, admin),
		post("/admin/assistants/:id/grants", s.handleAdminAssistantGrants, admin),
		post("/admin/assistants/:id/disable", s.handleAdminAssistantDisable, admin),
		post("/admin/assistants/:id/enable", s.handleAdminAssistantEnable, admin),
		post("/admin/keys/:id/revoke", s.handleAdminKeyRevoke, admin),
		post("/admin/assistants/:id/webhook", s.handleAdminWebhookRegister, admin),
		post("/admin/assistants/:id/webhook/remove", s.handleAdminWebhookRemove, admin),
		post("/admin/assistants/:id/deliveries/:delivery/resend", s.handleAdminWebhookResend, admin),
	}
}
