// Package console is the staff's side: signing in, the approval queue, the
// task view and its actions, hand-offs, the connected systems, the
// manager's metrics and policies, and the admin's users, assistants and
// webhooks. Each route names the roles that may use it.
package console

import (
	"context"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/assistants"
	"countersign/internal/audit"
	"countersign/internal/authserver"
	"countersign/internal/controlplane"
	"countersign/internal/factors"
	"countersign/internal/fanout"
	"countersign/internal/handoffs"
	"countersign/internal/lists"
	"countersign/internal/metrics"
	"countersign/internal/slackbot"
	"countersign/internal/sso"
	"countersign/internal/webhooks"
	"countersign/views"
	"countersign/web/kit"
	"countersign/web/layout"
)

// Config is what the console needs.
type Config struct {
	Registry *adapter.Registry
	Control  *controlplane.Service
	// Handoffs takes, ends and takes over hand-offs and sends on or
	// discards their drafts.
	Handoffs *handoffs.Service
	// Lists reads the lists and counts the pages show.
	Lists *lists.Service
	// Assistants keeps the assistants' catalog and keys; nil leaves the
	// admin's assistants page empty.
	Assistants *assistants.Service
	// Metrics answers the manager's metrics pages.
	Metrics *metrics.Reports
	// Webhooks registers assistants' outcome endpoints and lists and resends
	// their deliveries; nil leaves outcome webhooks off the admin page.
	Webhooks *webhooks.Service
	// Slack links people's Slack accounts on their Slack page; nil when
	// Slack is not connected.
	Slack SlackLinks
	// Factors asks for second factors at sign-in and keeps people's
	// authenticator apps; nil: password sign-in only, no factor pages.
	Factors *factors.Service
	// CustomerFrame is the customer frame of the pages a customer sees
	// here (the sign-in on the way to their requests, their account's
	// home); nil leaves them in the console's frame.
	CustomerFrame func(c echo.Context) *views.CustomerFrame
	// SSO signs staff in through the business's OpenID provider; nil
	// leaves single sign-on off.
	SSO *sso.Provider
	// StaffPasswordsOff refuses password sign-in to staff (-password-sign-in=false):
	// they sign in through SSO. Customers still sign in with a password.
	StaffPasswordsOff bool
	// AuthServer, when set, is the OAuth authorization server whose
	// consent page and admin list the console serves; nil leaves them out.
	AuthServer *authserver.Service
	// PublicBase is the console's configured address (-public-url), the
	// authorization server's issuer; empty takes the request's.
	PublicBase string
	// Audit signs the trail's checkpoints and writes its exports; nil
	// leaves the admin's audit page out.
	Audit *audit.Log
}

// SlackLinks links a person's Slack account to theirs (*slackbot.Bot).
type SlackLinks interface {
	Links(ctx context.Context, userID int64) ([]slackbot.Link, error)
	Redeem(ctx context.Context, userID int64, code string) (slackbot.Link, error)
	Unlink(ctx context.Context, userID int64, team, user string) error
	EmailMatch(ctx context.Context) (bool, error)
	SetEmailMatch(ctx context.Context, admin accounts.User, on bool) error
}

// Handler serves the console's routes.
type Handler struct {
	*layout.Frame
	cfg Config
	// tasks wakes live task pages on PostgreSQL notifications.
	tasks *fanout.Hub
}

// New builds the console's handlers on the pages' frame.
func New(frame *layout.Frame, cfg Config) *Handler {
	return &Handler{Frame: frame, cfg: cfg, tasks: fanout.New("task events", cfg.Control.ListenTaskEvents, frame.Log)}
}

// Routes is the console's part of the route table.
func (h *Handler) Routes() []kit.Route {
	admin := kit.Only(accounts.Admin)
	staff := kit.Only(accounts.Agent, accounts.Manager, accounts.Admin)
	managers := kit.Only(accounts.Manager, accounts.Admin)
	get, post := kit.GET, kit.POST
	return append([]kit.Route{
		get("/sign-in", h.handleSignInForm, kit.Anyone),
		post("/sign-in", h.handleSignIn, kit.Anyone),
		get("/sign-in/sso", h.handleSSOStart, kit.Anyone),
		get("/sign-in/sso/callback", h.handleSSOCallback, kit.Anyone),
		// Anyone: a customer who proved who they are on a link page signs
		// out here too; the handler answers 401 to a visitor with neither.
		post("/sign-out", h.handleSignOut, kit.Anyone),
		// The factor step of a password sign-in: the session names nobody
		// yet, so these are public; each handler needs the waiting sign-in.
		get(kit.FactorPath, h.handleFactorForm, kit.Anyone),
		post(kit.FactorPath, h.handleFactor, kit.Anyone),
		post(kit.FactorPath+"/enrol", h.handleFactorEnrol, kit.Anyone),
		post(kit.FactorPath+"/passkey/begin", h.handlePasskeySignInBegin, kit.Anyone),
		post(kit.FactorPath+"/passkey", h.handlePasskeySignIn, kit.Anyone),
		post(kit.FactorPath+"/passkey/enrol/begin", h.handlePasskeyEnrolBegin, kit.Anyone),
		post(kit.FactorPath+"/passkey/enrol", h.handlePasskeyEnrol, kit.Anyone),
		get("/account/factors", h.handleAccountFactors, staff),
		post("/account/factors/totp", h.handleAccountTOTPStart, staff),
		post("/account/factors/totp/confirm", h.handleAccountTOTPConfirm, staff),
		post("/account/factors/totp/remove", h.handleAccountTOTPRemove, staff),
		post("/account/factors/recovery", h.handleAccountRecoveryCodes, staff),
		post("/account/factors/passkey/begin", h.handlePasskeyRegisterBegin, staff),
		post("/account/factors/passkey", h.handlePasskeyRegister, staff),
		post("/account/factors/passkey/:id/remove", h.handlePasskeyRemove, staff),
		get(confirmPath, h.handleSSOConfirm, staff),
		post("/admin/users/factors", h.handleAdminFactorRequirement, admin),
		post("/admin/users/:id/factors/reset", h.handleAdminFactorReset, admin),
		get("/", h.handleHome, kit.SignedIn),
		get("/account/password", h.handlePasswordForm, kit.SignedIn),
		post("/account/password", h.handlePasswordChange, kit.SignedIn),
		get("/account/slack", h.handleSlackAccount, staff),
		post("/account/slack", h.handleSlackLink, staff),
		post("/account/slack/unlink", h.handleSlackUnlink, staff),
		post("/admin/slack/email-match", h.handleSlackEmailMatch, admin),

		get("/systems", h.handleSystems, staff),

		// The manager's pages: action-outcome metrics and policies.
		get("/metrics", h.handleMetrics, managers),
		get("/metrics/:file", h.handleMetricsCSV, managers),
		get("/metrics/table/:id", h.handleMetricsTable, managers),
		get("/policies", h.handlePolicies, managers),
		get("/policies/:system/:action", h.handlePolicyForm, managers),
		post("/policies/:system/:action", h.handlePolicyChange, managers),

		// The support agent's console: approval queue, tasks, hand-offs.
		get("/queue", h.handleQueue, staff),
		post("/queue/bulk", h.handleQueueBulk, staff),
		post("/queue/bulk/approve", h.handleQueueBulkApprove, staff),
		get("/queue/:id", h.handleQueueCard, staff),
		post("/queue/:id/claim", h.handleQueueClaim, staff),
		post("/queue/:id/approve", h.handleQueueApprove, staff),
		get("/queue/:id/step-up", h.handleQueueStepUp, staff),
		post("/queue/:id/step-up/begin", h.handleQueueStepUpBegin, staff),
		post("/queue/:id/step-up", h.handleQueueStepUpApprove, staff),
		post("/queue/:id/reject", h.handleQueueReject, staff),
		post("/queue/:id/send-back", h.handleQueueSendBack, staff),
		post("/queue/:id/edit", h.handleQueueEdit, staff),
		post("/queue/:id/requote", h.handleQueueRequote, staff),
		get("/tasks", h.handleTasks, staff),
		get("/tasks/:id", h.handleTask, staff),
		get("/tasks/:id/live", h.handleTaskLive, staff),
		get("/tasks/:id/events", h.handleTaskEvents, staff),
		post("/tasks/:id/pause", h.handleTaskPause, staff),
		post("/tasks/:id/resume", h.handleTaskResume, staff),
		post("/tasks/:id/cancel", h.handleTaskCancel, staff),
		post("/tasks/:id/blocks/lift", h.handleTaskBlockLift, kit.Only(accounts.Agent, accounts.Admin)),
		post("/invocations/:id/reconcile", h.handleInvocationReconcile, staff),
		post("/invocations/:id/reverse", h.handleInvocationReverse, staff),
		post("/controls/global-stop", h.handleGlobalStop, admin),
		get("/handoffs", h.handleHandoffs, staff),
		get("/handoffs/:id", h.handleHandoff, staff),
		post("/handoffs/:id/take", h.handleHandoffTake, staff),
		post("/handoffs/:id/take-over", h.handleHandoffTakeOver, managers),
		post("/handoffs/:id/resolve", h.handleHandoffResolve, staff),
		post("/handoffs/:id/give-back", h.handleHandoffGiveBack, staff),
		post("/handoffs/:id/draft/send", h.handleHandoffDraftSend, staff),
		post("/handoffs/:id/draft/discard", h.handleHandoffDraftDiscard, staff),

		get("/admin/users", h.handleAdminUsers, admin),
		post("/admin/users", h.handleAdminUserCreate, admin),
		post("/admin/users/:id/role", h.handleAdminUserRole, admin),
		get("/admin/users/:id/disable", h.handleAdminUserDisableConfirm, admin),
		post("/admin/users/:id/disable", h.handleAdminUserDisable, admin),
		post("/admin/users/:id/enable", h.handleAdminUserEnable, admin),

		get("/admin/assistants", h.handleAdminAssistants, admin),
		post("/admin/assistants", h.handleAdminAssistantCreate, admin),
		post("/admin/assistants/:id/keys", h.handleAdminAssistantKeyCreate, admin),
		post("/admin/assistants/:id/actions", h.handleAdminAssistantActions, admin),
		post("/admin/assistants/:id/grants", h.handleAdminAssistantGrants, admin),
		get("/admin/assistants/:id/disable", h.handleAdminAssistantDisableConfirm, admin),
		post("/admin/assistants/:id/disable", h.handleAdminAssistantDisable, admin),
		post("/admin/assistants/:id/enable", h.handleAdminAssistantEnable, admin),
		get("/admin/keys/:id/revoke", h.handleAdminKeyRevokeConfirm, admin),
		post("/admin/keys/:id/revoke", h.handleAdminKeyRevoke, admin),
		post("/admin/assistants/:id/webhook", h.handleAdminWebhookRegister, admin),
		post("/admin/assistants/:id/webhook/remove", h.handleAdminWebhookRemove, admin),
		post("/admin/assistants/:id/webhook/test", h.handleAdminWebhookTest, admin),
		post("/admin/assistants/:id/deliveries/:delivery/resend", h.handleAdminWebhookResend, admin),
	}, append(h.oauthRoutes(), h.auditRoutes()...)...)
}

// oauthRoutes are the consent page and the admin's clients page of the
// OAuth authorization server; none when it is off.
func (h *Handler) oauthRoutes() []kit.Route {
	if h.cfg.AuthServer == nil {
		return nil
	}
	admin := kit.Only(accounts.Admin)
	staff := kit.Only(accounts.Agent, accounts.Manager, accounts.Admin)
	return []kit.Route{
		kit.GET("/oauth/authorize", h.handleOAuthAuthorize, staff),
		kit.POST("/oauth/authorize", h.handleOAuthDecide, staff),
		kit.GET("/admin/clients", h.handleAdminClients, admin),
		kit.POST("/admin/clients/settings", h.handleAdminClientsSetting, admin),
		kit.POST("/admin/clients/approve", h.handleAdminClientApprove, admin),
		kit.POST("/admin/clients/revoke", h.handleAdminClientRevoke, admin),
		kit.POST("/admin/grants/:id/revoke", h.handleAdminGrantRevoke, admin),
	}
}
