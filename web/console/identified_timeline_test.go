package console_test

import (
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/web/kit"
	"countersign/web/webtest"
)

// TestTheTimelineSaysHowEachPersonWasIdentified: beside the person's name
// the task's timeline says, in words, how they were identified for that
// change: "Sam (single sign-on) approved …".
func TestTheTimelineSaysHowEachPersonWasIdentified(t *testing.T) {
	t.Parallel()
	for _, s := range []struct {
		name      string
		set       map[string]any
		drop      []string
		want      string
		wantShown bool
	}{
		{name: "single sign-on", set: map[string]any{kit.KeyIdentifiedBy: "oidc", kit.KeyIdentityIssuer: "https://idp.example.test",
			kit.KeyIdentitySubject: "sam-0042"}, want: "(single sign-on)", wantShown: true},
		{name: "password and an app", set: map[string]any{kit.KeyIdentifiedBy: "password+totp"},
			want: "(password and authenticator app)", wantShown: true},
		{name: "unknown", drop: []string{kit.KeyIdentifiedBy}, set: map[string]any{kit.KeySignedInUntil: time.Now().Add(time.Hour).Unix()}},
	} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			b := webtest.New(t, webtest.WithShop())
			f := webtest.NewShopper(t, b)
			inv := f.Describe(t, "Now in elm.")
			u := b.Users[accounts.Agent]
			c := b.Client(t)
			c.MustSignIn(u)
			rewriteSession(t, b, u.ID, s.set, s.drop)
			post(t, c, "/queue/"+inv.ID+"/approve", webtest.CardForm(t, c.Get("/queue/"+inv.ID), "approve-form"))
			row := c.Get("/tasks/" + f.Task.ID).Doc(t).Find(`[data-testid="event"][data-event="invocation.approved"]`)
			if row.Length() != 1 {
				t.Fatalf("%d approval rows on the timeline", row.Length())
			}
			got := row.Find(`[data-testid="identified-by"]`)
			if s.wantShown && (got.Length() != 1 || got.Text() != s.want || row.Find("strong").Text() != u.Name) {
				t.Errorf("the approval reads %q, want %s beside %s", webtest.Squash(row.Text()), s.want, u.Name)
			}
			if !s.wantShown && got.Length() != 0 {
				t.Errorf("an unknown identification is shown as %q", got.Text())
			}
		})
	}
}
