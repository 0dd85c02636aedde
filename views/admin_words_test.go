package views

import (
	"regexp"
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// adminPage is the page the staff views of this file render in.
var adminPage = Page{Title: "Admin", User: &User{Name: "Ada", RoleLabel: "admin"}, CSRF: "tok"}

// adminAssistant is an assistant with every part its card can show: keys
// live and revoked, actions, both customer and reports rules, an endpoint
// and deliveries in every state with their attempts.
func adminAssistant(id string, wide bool) AssistantRow {
	a := AssistantRow{
		ID: id, Name: "support-bot", Created: "May 1", Disabled: !wide,
		Keys:    []KeyRow{{ID: "k1", Prefix: "ak_12ab", Created: "May 1", LastUsed: "May 2"}, {ID: "k2", Prefix: "ak_34cd", Created: "May 1", LastUsed: "never", Revoked: "May 3"}},
		Actions: []ActionToggle{{Value: "shop/refund_order", Label: "Refund an order", Enabled: true}},
		Grants:  GrantsForm{MaxWriteBudget: "5", MaxInflightLimit: "2", MaxRatePerMinute: "60", AnyCustomer: wide, ReportsWithoutTask: wide},
	}
	if wide {
		a.Webhook = &WebhookRow{URL: "https://bot.example/hook", Created: "May 1"}
		a.Deliveries = []DeliveryRow{
			{ID: "d1", Event: "invocation.completed", InvocationID: "inv-1", State: "delivered", Created: "May 2",
				Attempts: []AttemptRow{{At: "09:00", Status: "200", Body: "ok"}}},
			{ID: "d2", Event: "webhook.test", State: "pending", Created: "May 2", Failing: "HTTP 500 from bot.example at 09:01",
				Attempts: []AttemptRow{{At: "09:00", Error: "connection refused"}, {At: "09:01", Status: "500"}}},
			{ID: "d3", Event: "invocation.failed", InvocationID: "inv-2", State: "pending", Created: "May 2", Next: "09:05"},
			{ID: "d4", Event: "invocation.rejected", InvocationID: "inv-3", State: "failed", Created: "May 2", Removed: true},
			{ID: "d5", Event: "invocation.approved", InvocationID: "inv-4", State: "failed", Created: "May 2"},
		}
		for i, e := range []string{"invocation.confirmed", "invocation.declined", "invocation.sent_back", "invocation.expired",
			"invocation.not_dispatched", "invocation.unverified", "invocation.reconciled"} {
			a.Deliveries = append(a.Deliveries, DeliveryRow{ID: itoaView(10 + i), Event: e, InvocationID: "inv-9", State: "delivered", Created: "May 2"})
		}
	}
	return a
}

// adminViews are the staff views of this file in every state they show,
// by name.
func adminViews() map[string]templ.Component {
	errs := FieldErrors{"name": "the field's message", "email": "the field's message", "role": "the field's message",
		"password": "the field's message", "current": "the field's message", "new": "the field's message",
		"code": "the field's message", "url": "the field's message", "act_as": "the field's message",
		"max_write_budget": "the field's message"}
	wide, narrow := adminAssistant("as1", true), adminAssistant("as2", false)
	params := []ParamView{{Name: "order_id", Type: "string", Required: true, Description: "The order", Enum: []string{"a", "b"}}}
	return map[string]templ.Component{
		"users": AdminUsers(adminPage, AdminUsersView{
			Users: []UserRow{
				{ID: 1, Name: "Ada Lovelace", Email: "ada@example.com", Role: "admin", RoleLabel: "admin", Created: "May 1", Self: true},
				{ID: 2, Name: "Grace Hopper", Email: "grace@example.com", Role: "agent", RoleLabel: "agent", Created: "May 1", SSOIssuer: "https://sso.example", Factors: true},
				{ID: 3, Name: "Alan Turing", Email: "alan@example.com", Role: "agent", RoleLabel: "agent", Created: "May 1", Disabled: true, Factors: true},
			},
			Form:        NewUserForm{Name: "Bea", Email: "bea@example.com", Role: "agent", Errors: errs},
			Roles:       []Option{{Value: "agent", Label: "agent"}, {Value: "admin", Label: "admin"}},
			FactorRoles: []FactorRoleRow{{Role: "admin", Label: "admin", Required: true}, {Role: "agent", Label: "agent"}},
		}),
		"confirm":         AdminConfirm(adminPage, AdminConfirmView{Heading: "Revoke key ak_12ab?", Ends: []string{"The key stops working."}, Action: "/x", Button: "Revoke key", Back: "/admin"}),
		"confirm refused": AdminConfirm(adminPage, AdminConfirmView{Heading: "Revoke key ak_12ab?", Refused: "It is revoked already.", Back: "/admin"}),
		"password":        Password(adminPage, PasswordForm{Errors: errs, Factors: true}),
		"password plain":  Password(adminPage, PasswordForm{}),
		"password sso":    Password(adminPage, PasswordForm{Factors: true, ManagedBy: "https://sso.example"}),
		"sign-in":         SignIn(adminPage, SignInForm{Email: "ada@example.com", Next: "/queue", Error: "Those details do not match.", SSOName: "Okta", StaffUseSSO: true}),
		"sign-in plain":   SignIn(adminPage, SignInForm{}),
		"clients": AdminClients(adminPage, AdminClientsView{NeedApproval: true, MCPURL: "https://cs.example/mcp",
			Clients: []AdminClientRow{{ID: "c1", Name: "Claude", KnownBy: "its metadata document", Returns: "claude.ai", Created: "May 1", Status: "Awaiting approval", CanApprove: true, CanRevoke: true}},
			Grants:  []AdminGrantRow{{ID: "g1", Client: "Claude", Person: "Ada Lovelace", ActsAs: "support-bot", Created: "May 1", LastUsed: "May 2", Status: "In use", CanRevoke: true}}}),
		"clients none": AdminClients(adminPage, AdminClientsView{MCPURL: "https://cs.example/mcp"}),
		"audit": AdminAudit(adminPage, AdminAuditView{VerifierKey: auditKey, Latest: "Covers 12 entries.", Checkpoint: auditCheckpoint,
			From: "2026-11-01", To: "2026-12-01", VerifyCommand: "countersign audit verify -key " + auditKey + " trail.jsonl"}),
		"audit none": AdminAudit(adminPage, AdminAuditView{VerifierKey: auditKey, From: "2026-11-01", To: "2026-12-01",
			VerifyCommand: "countersign audit verify -key " + auditKey + " trail.jsonl"}),
		"assistants": AdminAssistants(adminPage, AdminAssistantsView{
			Assistants:  []AssistantRow{wide, narrow},
			Form:        NewAssistantForm{Name: "bot", EnableAll: true, Errors: errs},
			NewKey:      &NewKeyNotice{AssistantName: "support-bot", Secret: "ak_secret"},
			NewWebhook:  &NewWebhookNotice{AssistantName: "support-bot", URL: "https://bot.example/hook", Secret: "whsec_x"},
			WebhookForm: WebhookForm{AssistantID: "as1", URL: "http://bad", Errors: errs},
			GrantsForm:  GrantsForm{AssistantID: "as2", MaxWriteBudget: "x", Errors: errs},
		}),
		"assistants none": AdminAssistants(adminPage, AdminAssistantsView{}),
		"grants":          AssistantGrants(adminPage, narrow, GrantsForm{}),
		"webhook":         AssistantWebhook(adminPage, wide, WebhookForm{}),
		"webhook card":    NewWebhookCard(NewWebhookNotice{AssistantName: "support-bot", URL: "https://bot.example/hook", Secret: "whsec_x"}),
		"slack": SlackAccount(adminPage, SlackAccountView{Enabled: true, Admin: true, EmailMatch: true, Errors: errs,
			Links: []SlackLinkView{{Team: "T1", User: "U1", Who: "T1/U1", How: "with a code", When: "May 1"}}}),
		"slack off":      SlackAccount(adminPage, SlackAccountView{Enabled: true, Admin: true, CanDecide: true}),
		"slack disabled": SlackAccount(adminPage, SlackAccountView{}),
		"systems": Systems(adminPage, SystemsView{Systems: []SystemView{{Name: "shop", Title: "The shop",
			Actions: []ActionView{
				{Name: "refund_order", Title: "Refund an order", Description: "Refunds it.", Risk: "irreversible", Limits: []string{"At most $500"}, Guidance: "Refund when asked.", Params: params, Stage: "live"},
				{Name: "change_address", Title: "Change the address", Description: "Changes it.", Risk: "reversible", Compensation: "change_address", Guidance: "Check first.", Stage: "live"},
			},
			ReadTools: []ReadToolView{{Name: "get_order", Title: "Read an order", Description: "Reads it.", Params: params}}},
			{Name: "crm", Title: "crm"}}}),
		"systems none": Systems(adminPage, SystemsView{}),
		"consent": OAuthConsent(adminPage, OAuthConsentView{ClientName: "Claude", RedirectHost: "claude.ai", KnownBy: "its metadata document", New: true,
			Params: []OAuthParam{{Name: "state", Value: "s"}}, Errors: errs,
			Choices: []OAuthChoice{{Value: "support-bot", Label: "support-bot", About: "The support assistant", Checked: true}}}),
		"consent refused": OAuthConsent(adminPage, OAuthConsentView{Refused: "The client is unknown."}),
		"quote value long": QuoteValue("the old words of a long text that goes on and on for a good while, longer than a line can hold at all",
			"the new words of a long text that goes on and on for a good while, longer than a line can hold at all\u200b", false),
		"quote value": QuoteValue("a", "b\u200b", true),
	}
}

// adminData are the data of adminViews: the people's, the business's and
// the assistants' words, not the console's.
var adminData = []string{"Admin", "Ada", "admin", "agent", "Ada Lovelace", "ada@example.com", "May 1", "Grace Hopper",
	"grace@example.com", "https://sso.example", "Alan Turing", "alan@example.com", "Bea", "the field's message",
	"Revoke key ak_12ab?", "The key stops working.", "Revoke key", "It is revoked already.",
	"Those details do not match.", "Okta", "Claude", "its metadata document", "claude.ai", "Awaiting approval",
	"support-bot", "May 2", "In use", "https://cs.example/mcp", "ak_12ab", "ak_34cd", "never", "May 3",
	"Refund an order", "ak_secret", "https://bot.example/hook", "whsec_x", "5", "2", "60", "x", "inv-1", "inv-2",
	"inv-3", "inv-4", "inv-9", "d1", "d2", "d3", "d4", "d5", "09:00", "09:01", "09:05", "200", "500", "ok",
	"HTTP 500 from bot.example at 09:01", "connection refused", "invocation.completed", "webhook.test",
	"invocation.failed", "invocation.rejected", "invocation.approved", "invocation.confirmed", "invocation.declined",
	"invocation.sent_back", "invocation.expired", "invocation.not_dispatched", "invocation.unverified",
	"invocation.reconciled", "T1/U1", "with a code", "shop", "The shop", "refund_order", "Refunds it.",
	"At most $500", "Refund when asked.", "order_id", "string", "The order", "a", "b", "live", "change_address",
	"Change the address", "Changes it.", "Check first.", "get_order", "Read an order", "Reads it.", "crm",
	"The support assistant", "The client is unknown.", "⟨U+200B⟩", "http://bad", "bot",
	// The protocol's names, written as code.
	"webhook-signature", `"test": true`, "/api/v1", "/mcp", "SHOP_URL"}

// dataLabel finds the data-label attributes a narrow table shows.
var dataLabel = regexp.MustCompile(`data-label="([^"]*)"`)

// adminStrays checks the named views of adminViews: an installation's
// override of every console text shows, and nothing else, data-label
// included.
func adminStrays(t *testing.T, names ...string) {
	t.Helper()
	adminStraysWith(t, nil, names...)
}

// adminStraysWith is adminStrays with more data the views show.
func adminStraysWith(t *testing.T, data []string, names ...string) {
	t.Helper()
	data = append(data, adminData...)
	installMarkedConsole(t)
	views := adminViews()
	for _, name := range names {
		c, ok := views[name]
		if !ok {
			t.Fatalf("no view %q", name)
		}
		_, html := renderDoc(t, c)
		if strays := consoleStrays(html, data...); len(strays) > 0 {
			t.Errorf("%s writes text of its own:\n%s", name, strings.Join(strays, "\n"))
		}
		for _, m := range dataLabel.FindAllStringSubmatch(html, -1) {
			if !strings.HasPrefix(m[1], "⟦") {
				t.Errorf("%s: data-label %q is not the catalogue's", name, m[1])
			}
		}
		if !strings.Contains(html, "⟦") {
			t.Errorf("%s shows no console text", name)
		}
	}
}

// auditKey and auditCheckpoint are a verifier key and a signed note, the
// data of the audit page.
const (
	auditKey        = "cs.example/audit+1a2b3c4d+AeHt3Qm6ZbqJ0ZgmC0rQ0Z6n1dA4a2v8b9c0d1e2f3g4"
	auditCheckpoint = "cs.example/audit\n12\nqV1/0jYqq6VuzZ1e5e9oN0pIPNCm1IjPYXgBsjtUWo8=\n"
)

// TestTheAuditPageComesFromTheCatalogue: the admin's audit page (with a
// checkpoint and before the first) writes no text of its own: the key,
// the checkpoint and the command are data.
func TestTheAuditPageComesFromTheCatalogue(t *testing.T) {
	adminStraysWith(t, []string{auditKey, auditCheckpoint, "Covers 12 entries.", "countersign audit verify -key " + auditKey + " trail.jsonl"},
		"audit", "audit none")
}

// TestTheAdminConfirmationComesFromTheCatalogue: the step that confirms a
// change ending something, and its refusal, write no text of their own.
func TestTheAdminConfirmationComesFromTheCatalogue(t *testing.T) {
	adminStrays(t, "confirm", "confirm refused")
}

// TestThePasswordPageComesFromTheCatalogue: the password page (the form
// with its errors and the factors link; an account single sign-on manages)
// writes no text of its own.
func TestThePasswordPageComesFromTheCatalogue(t *testing.T) {
	adminStrays(t, "password", "password plain", "password sso")
}

// TestTheSignInPageComesFromTheCatalogue: the sign-in page (with an error
// and single sign-on, and plain) writes no text of its own.
func TestTheSignInPageComesFromTheCatalogue(t *testing.T) {
	adminStrays(t, "sign-in", "sign-in plain")
}

// TestTheQuoteValueComesFromTheCatalogue: a quote line's value (a word
// diff with its words for screen readers and the whole texts, a short
// change, characters a person cannot see) writes no text of its own.
func TestTheQuoteValueComesFromTheCatalogue(t *testing.T) {
	long := []string{"the old words of a long text that goes on and on for a good while, longer than a line can hold at all",
		"the new words of a long text that goes on and on for a good while, longer than a line can hold at all",
		"words of a long text that goes on and on for a good while, longer than a line can hold at", "the", "old", "new", "all"}
	adminStraysWith(t, long, "quote value long", "quote value")
}

// TestTheUsersPageComesFromTheCatalogue: the users page (the signed-in
// admin, a person single sign-on manages, a disabled one, the second
// factor's roles, the new-user form with its errors) writes no text of
// its own.
func TestTheUsersPageComesFromTheCatalogue(t *testing.T) {
	adminStrays(t, "users")
}

// TestTheClientsPageComesFromTheCatalogue: the connected clients page,
// with clients and connections and without, writes no text of its own.
func TestTheClientsPageComesFromTheCatalogue(t *testing.T) {
	adminStrays(t, "clients", "clients none")
}

// TestTheAssistantsLimitsComeFromTheCatalogue: the part of an assistant's
// card that bounds its tasks (the maxima, the customer and reports rules)
// writes no text of its own.
func TestTheAssistantsLimitsComeFromTheCatalogue(t *testing.T) {
	wide := adminAssistant("as3", true)
	installMarkedConsole(t)
	_, html := renderDoc(t, AssistantGrants(adminPage, wide, GrantsForm{}))
	if strays := consoleStrays(html, adminData...); len(strays) > 0 {
		t.Errorf("the limits of an assistant acting for anyone write text of their own:\n%s", strings.Join(strays, "\n"))
	}
	adminStrays(t, "grants")
}

// TestTheOutcomeWebhookComesFromTheCatalogue: the outcome webhook's part of
// an assistant's card (the endpoint, its form, deliveries in every state
// with their attempts) and a new endpoint's secret write no text of their
// own.
func TestTheOutcomeWebhookComesFromTheCatalogue(t *testing.T) {
	adminStrays(t, "webhook", "webhook card")
}

// TestTheAssistantsPageComesFromTheCatalogue: the assistants page (a new
// key and a new endpoint's secret, an active and a disabled assistant
// with keys live and revoked, the limits with both customer and reports
// rules, the endpoint and deliveries in every state, the forms with their
// errors; no assistant at all) writes no text of its own.
func TestTheAssistantsPageComesFromTheCatalogue(t *testing.T) {
	adminStrays(t, "assistants", "assistants none")
}

// TestTheSlackPageComesFromTheCatalogue: the Slack page (links, linking by
// e-mail on and off, a role that decides and one that does not, Slack
// not connected) writes no text of its own.
func TestTheSlackPageComesFromTheCatalogue(t *testing.T) {
	adminStrays(t, "slack", "slack off", "slack disabled")
}

// TestTheSystemsPageComesFromTheCatalogue: the connected systems page
// (actions that can and cannot be undone, limits, arguments, read tools;
// no system) writes no text of its own.
func TestTheSystemsPageComesFromTheCatalogue(t *testing.T) {
	adminStrays(t, "systems", "systems none")
}

// TestTheConsentPageComesFromTheCatalogue: the OAuth consent page (a new
// client with its choices and an error; a refusal) writes no text of its
// own.
func TestTheConsentPageComesFromTheCatalogue(t *testing.T) {
	adminStrays(t, "consent", "consent refused")
}
