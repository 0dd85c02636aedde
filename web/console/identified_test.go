package console_test

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/fakeslack"
	"countersign/store"
	"countersign/web/kit"
	"countersign/web/webtest"
)

// staffSessions are the ways a session's person was identified: set
// rewrites the signed-in session as a sign-in of that kind left it, and
// want is what the audit trail must record.
var staffSessions = []struct {
	name string
	set  map[string]any
	drop []string
	want controlplane.Identification
}{
	{name: "password", want: controlplane.Identification{Method: "password"}},
	{name: "password and an authenticator app", set: map[string]any{kit.KeyIdentifiedBy: "password+totp"},
		want: controlplane.Identification{Method: "password+totp"}},
	{name: "password and a recovery code", set: map[string]any{kit.KeyIdentifiedBy: "password+recovery"},
		want: controlplane.Identification{Method: "password+recovery"}},
	{name: "single sign-on", set: map[string]any{kit.KeyIdentifiedBy: "oidc", kit.KeyIdentityIssuer: "https://idp.example.test",
		kit.KeyIdentitySubject: "sam-0042", kit.KeySignedInUntil: time.Now().Add(24 * time.Hour).Unix()},
		want: controlplane.Identification{Method: "oidc", Issuer: "https://idp.example.test", Subject: "sam-0042"}},
	{name: "a password session from before the method was recorded", drop: []string{kit.KeyIdentifiedBy},
		want: controlplane.Identification{Method: "password"}},
	{name: "a provider's session without the method", drop: []string{kit.KeyIdentifiedBy},
		set: map[string]any{kit.KeySignedInUntil: time.Now().Add(24 * time.Hour).Unix()}, want: controlplane.Identification{Method: "unknown"}},
}

// TestEveryStaffDoorRecordsHowThePersonWasIdentified walks every staff
// door with every kind of session, and a Slack click, and checks that
// each event the change recorded names how its person was identified: a
// door that builds its actor without the session records "unknown" and
// fails here.
func TestEveryStaffDoorRecordsHowThePersonWasIdentified(t *testing.T) {
	t.Parallel()
	for _, door := range staffDoors {
		for _, s := range staffSessions {
			t.Run(door.name+"/"+s.name, func(t *testing.T) {
				t.Parallel()
				opts := []webtest.Option{webtest.WithShop()}
				if door.assistant {
					opts = append(opts, webtest.WithAssistant())
				}
				b := webtest.New(t, opts...)
				f := webtest.NewShopper(t, b)
				id := door.prepare(t, b, f)
				u := b.Users[door.role]
				c := b.Client(t)
				c.MustSignIn(u)
				rewriteSession(t, b, u.ID, s.set, s.drop)
				since := lastEvent(t, b)
				door.do(t, b, c, id)
				checkIdentified(t, b, u.ID, since, s.want, door.stepUp)
			})
		}
	}
	t.Run("slack click", func(t *testing.T) {
		t.Parallel()
		b := webtest.New(t, webtest.WithShop(), webtest.WithSlack())
		f := webtest.NewShopper(t, b)
		f.Describe(t, "Now in ash.")
		ctx := context.Background()
		if err := b.Bot.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		msgs := b.Slack.Messages()
		if len(msgs) != 1 {
			t.Fatalf("%d messages posted, want 1", len(msgs))
		}
		sam := b.Slack.AddUser(fakeslack.User{ID: "U0SAM", Name: "Sam"})
		u := b.Users[accounts.Agent]
		click, _ := b.Slack.Click(sam, msgs[0], "approve")
		if err := b.Store.LinkSlackUser(ctx, store.SlackLink{Team: slackTeam(t, click.Body), User: sam.ID, UserID: u.ID, How: "code", LinkedAt: b.Now()}); err != nil {
			t.Fatal(err)
		}
		since := lastEvent(t, b)
		if status, body, err := click.Send(b.Server.URL + "/slack/interactions"); err != nil || status != http.StatusOK {
			t.Fatalf("the click: %d %s %v", status, body, err)
		}
		checkIdentified(t, b, u.ID, since, controlplane.Identification{Method: "slack", Issuer: slackTeam(t, click.Body), Subject: sam.ID}, false)
	})
}

// slackTeam is the workspace a click was made in.
func slackTeam(t *testing.T, body []byte) string {
	t.Helper()
	form, err := url.ParseQuery(string(body))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Team struct {
			ID string `json:"id"`
		} `json:"team"`
	}
	if err := json.Unmarshal([]byte(form.Get("payload")), &p); err != nil || p.Team.ID == "" {
		t.Fatalf("the click names no team: %v", err)
	}
	return p.Team.ID
}

// rewriteSession leaves every live session of userID as a sign-in that
// set set and not drop would have.
func rewriteSession(t *testing.T, b *webtest.Stack, userID int64, set map[string]any, drop []string) {
	t.Helper()
	ctx := context.Background()
	rows, err := b.Store.Pool().Query(ctx, `SELECT id_hash, data FROM sessions WHERE user_id = $1 AND revoked_at IS NULL`, userID)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ hash, data []byte }
	var live []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.hash, &r.data); err != nil {
			t.Fatal(err)
		}
		live = append(live, r)
	}
	if rows.Err() != nil || len(live) == 0 {
		t.Fatalf("no live session of user %d: %v", userID, rows.Err())
	}
	for _, r := range live {
		rewriteValues(t, b, r.hash, r.data, set, drop)
	}
}

// rewriteValues stores the session hash's values data with set set and
// drop dropped.
func rewriteValues(t *testing.T, b *webtest.Stack, hash, data []byte, set map[string]any, drop []string) {
	t.Helper()
	values := map[any]any{}
	if len(data) > 0 {
		if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&values); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range set {
		values[k] = v
	}
	for _, k := range drop {
		delete(values, k)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(values); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.Pool().Exec(context.Background(), `UPDATE sessions SET data = $2 WHERE id_hash = $1`, hash, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
}

// lastEvent is the id of the newest audit event.
func lastEvent(t *testing.T, b *webtest.Stack) int64 {
	t.Helper()
	var id int64
	if err := b.Store.Pool().QueryRow(context.Background(), `SELECT coalesce(max(id), 0) FROM events`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// checkIdentified fails t unless userID's change after event since
// recorded at least one event, each naming want as identified_by.
// With stepUp, each approval event must also name the passkey of its
// step-up.
func checkIdentified(t *testing.T, b *webtest.Stack, userID, since int64, want controlplane.Identification, stepUp bool) {
	t.Helper()
	rows, err := b.Store.Pool().Query(context.Background(), `SELECT action, coalesce(data->'identified_by', 'null') FROM events
		WHERE id > $1 AND actor_kind = 'user' AND actor_id = $2::bigint::text ORDER BY id`, since, userID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var action string
		var raw []byte
		if err := rows.Scan(&action, &raw); err != nil {
			t.Fatal(err)
		}
		n++
		var got controlplane.Identification
		err := json.Unmarshal(raw, &got)
		if stepUp && (action == "invocation.approved" || action == "invocation.first_approval") {
			if got.StepUp == nil || len(got.StepUp.CredentialID) == 0 {
				t.Errorf("event %s records identified_by %s without the step-up's passkey", action, raw)
			}
			got.StepUp = nil
		}
		if err != nil || got != want {
			t.Errorf("event %s records identified_by %s, want %+v", action, raw, want)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Errorf("the change recorded no event by the person")
	}
}
