package console

import (
	"bytes"
	"context"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"countersign/internal/controlplane"
	"countersign/internal/locale/pseudotest"
	"countersign/views"
)

// sentenceParts are the elements a console sentence holds as parameters
// (as views' consoleStrays reads them): unwrapped, each sentence is one
// text again.
var sentenceParts = regexp.MustCompile(`</?(time|a|span|strong|code)(\s[^>]*)?>`)

// TestTheTaskPageSaysNothingOfItsOwn renders the task page as the handler
// builds it, under the marked console: a timeline holding every event
// kind in every case eventSentence tells apart, with every kind of actor,
// and an inspected call with the system's effects. Only the business's
// own words (names, titles, objects, references) and the times may show
// outside a catalogue text.
func TestTheTaskPageSaysNothingOfItsOwn(t *testing.T) {
	pseudotest.InstallMarkedConsole(t)
	at := time.Date(2026, 5, 1, 9, 30, 15, 0, time.UTC)
	names := make([]string, 0)
	cases := timelineEvents()
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	actors := []controlplane.ActorKind{controlplane.ActorUser, controlplane.ActorAssistant, controlplane.ActorCustomer,
		controlplane.ActorPolicy, controlplane.ActorSystem}
	events := make([]controlplane.Event, 0, len(names))
	for i, name := range names {
		e, subject := cases[name]()
		if subject == "" {
			e.InvocationID = ""
		}
		if e.ActorKind == "" {
			e.ActorKind = actors[i%len(actors)]
		}
		e.ID, e.At = int64(i+1), at
		events = append(events, e)
	}
	in := inspections()["other amount and a note"]
	iv := inspectView(in, actionWords)
	v := views.TaskView{IsAdmin: true, CanLiftBlocks: true, Inspect: &iv,
		Live: views.TaskLiveView{ID: "t1", Title: subjectWords(requestWords("Issue refund", "order 7", "ord_7"), 3),
			State: taskBadge(controlplane.TaskPaused), Notice: pausedNotice(2), ExpiresAt: "May 2 10:00 UTC",
			CanPause: true, Timeline: timeline(events, map[string]string{"inv_1": requestWords("Issue refund", "", "ord_1")})}}
	var buf bytes.Buffer
	p := views.Page{Title: "Task t1", User: &views.User{Name: "Ada", RoleLabel: "agent"}, CSRF: "tok"}
	if err := views.Task(p, v).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	data := []string{"Task t1", "Ada", "agent", "Bot", "Grace", "Refund $12.50", "Refund $20.00", "Refund",
		"May 1 09:30:15 UTC", "May 2 10:00 UTC", "Change the address", "shop/issue_refund", "inv_1", "key_1", "cafe", "sending",
		"Enter", "Esc", "t1"}
	html := sentenceParts.ReplaceAllString(buf.String(), "")
	if strays := pseudotest.Strays(html, data...); len(strays) > 0 {
		t.Errorf("the task page writes text of its own:\n%s", strings.Join(strays, "\n"))
	}
}

// TestHowAPersonWasIdentifiedReadsAsBefore: from the catalogue, how a
// person was identified reads in English as controlplane's words for it
// (which the receipt's check writes), for each way and each second step.
func TestHowAPersonWasIdentifiedReadsAsBefore(t *testing.T) {
	for _, method := range []string{"password", "oidc", "slack", "password+totp", "oidc+passkey", "password+recovery",
		"password+totp+passkey", "webauthn9", "password+webauthn9", "unknown", ""} {
		e := controlplane.Event{Data: map[string]any{"identified_by": map[string]any{"method": method}}}
		if got, want := identifiedWords(e), controlplane.IdentificationWords(method); got != want {
			t.Errorf("%q reads %q, want %q", method, got, want)
		}
	}
}
