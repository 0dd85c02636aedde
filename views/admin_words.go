package views

import (
	"context"
	"io"
	"strings"

	"github.com/a-h/templ"

	"countersign/internal/locale"
)

// consoleHidden is a console sentence part of which is for screen readers
// only: the words between [[ and ]] ("Disable…[[ {{.Name}}]]") are written
// visually hidden, so the button reads whole to a screen reader and short
// on screen, and the sentence stays one message.
func consoleHidden(id string, p map[string]any) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		text := templ.EscapeString(locale.Console(id, p))
		text = strings.NewReplacer("[[", `<span class="visually-hidden">`, "]]", "</span>").Replace(text)
		_, err := io.WriteString(w, text)
		return err
	})
}

// eventWords says a delivery's event for people: "Write completed"; an
// event it does not know is shown as it is.
func eventWords(event string) string {
	if id, ok := eventIDs[event]; ok {
		return consoleText(id)
	}
	return event
}

// eventIDs are the console texts of the outcome events an endpoint is
// told.
var eventIDs = map[string]string{
	"invocation.confirmed":      "console.admin.webhook.event.confirmed",
	"invocation.declined":       "console.admin.webhook.event.declined",
	"invocation.approved":       "console.admin.webhook.event.approved",
	"invocation.rejected":       "console.admin.webhook.event.rejected",
	"invocation.sent_back":      "console.admin.webhook.event.sent_back",
	"invocation.expired":        "console.admin.webhook.event.expired",
	"invocation.completed":      "console.admin.webhook.event.completed",
	"invocation.failed":         "console.admin.webhook.event.failed",
	"invocation.not_dispatched": "console.admin.webhook.event.not_dispatched",
	"invocation.unverified":     "console.admin.webhook.event.unverified",
	"invocation.reconciled":     "console.admin.webhook.event.reconciled",
	"webhook.test":              "console.admin.webhook.event.test",
}
