package console_test

import (
	"net/http"
	"slices"
	"testing"

	"countersign/internal/accounts"
	"countersign/web/webtest"
)

// staffPostsNotWalked are the staff POST routes that are not in
// staffDoors, each with why: they record no audit event, or they do and
// are still to be walked (they build their actor with actorOf like the
// walked doors).
var staffPostsNotWalked = map[string]string{
	"/queue/bulk":                                       "the bulk review page; records nothing",
	"/queue/:id/claim":                                  "a claim records no event",
	"/queue/:id/step-up/begin":                          "starts the person's step-up ceremony for a card; records no event",
	"/account/factors/totp":                             "starts an app's set-up; records no event (its confirmation, walked, does)",
	"/account/factors/passkey/begin":                    "starts the person's own passkey ceremony; records no event",
	"/account/factors/passkey":                          "records factor.added with actorOf's identification like the walked app doors; a passkey needs a console at a host name (TestPasskeyAddedOnTheAccountPageIsTheSecondFactor)",
	"/account/factors/passkey/:id/remove":               "records factor.removed with actorOf's identification like the walked app removal; a passkey needs a console at a host name",
	"/account/password":                                 "the person's own password; records no event",
	"/account/slack":                                    "linking Slack; records no event",
	"/account/slack/unlink":                             "unlinking Slack; records no event",
	"/admin/slack/email-match":                          "a setting; records no event",
	"/admin/users":                                      "accounts record no event",
	"/admin/users/:id/role":                             "accounts record no event",
	"/admin/users/:id/disable":                          "accounts record no event",
	"/admin/users/:id/enable":                           "accounts record no event",
	"/admin/assistants":                                 "assistants record no event",
	"/admin/assistants/:id/keys":                        "keys record no event",
	"/admin/assistants/:id/actions":                     "assistants record no event",
	"/admin/assistants/:id/disable":                     "assistants record no event",
	"/admin/assistants/:id/enable":                      "assistants record no event",
	"/admin/keys/:id/revoke":                            "keys record no event",
	"/admin/assistants/:id/webhook":                     "registering an endpoint records no event",
	"/admin/assistants/:id/webhook/remove":              "removing an endpoint records no event",
	"/admin/assistants/:id/deliveries/:delivery/resend": "a resend records no event",
}

// TestEveryStaffPostIsWalkedOrSaysWhyNot: a staff POST route added to the
// console must join staffDoors (so the door test checks its events name
// how the person was identified) or say here why it need not.
func TestEveryStaffPostIsWalkedOrSaysWhyNot(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	walked := map[string]bool{}
	for _, d := range staffDoors {
		walked[d.route] = true
	}
	seen := map[string]bool{}
	for _, r := range b.Web.Echo().Routes() {
		if r.Method != http.MethodPost {
			continue
		}
		roles, public, ok := b.Web.AccessRule(r.Method, r.Path)
		staff := ok && !public && (slices.Contains(roles, accounts.Agent) || slices.Contains(roles, accounts.Manager) ||
			slices.Contains(roles, accounts.Admin))
		if !staff {
			continue
		}
		seen[r.Path] = true
		if _, why := staffPostsNotWalked[r.Path]; !walked[r.Path] && !why {
			t.Errorf("POST %s is a staff door the identification test does not walk: add it to staffDoors, or say in staffPostsNotWalked why not", r.Path)
		}
	}
	for route := range walked {
		if !seen[route] {
			t.Errorf("staffDoors walks %s, which is not a staff POST route", route)
		}
	}
	for route := range staffPostsNotWalked {
		if !seen[route] {
			t.Errorf("staffPostsNotWalked names %s, which is not a staff POST route", route)
		}
	}
}
