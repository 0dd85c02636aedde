package views

import (
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// taskForWords is a task with every part its page can show: the
// inspection of an original call, each control, the global stop, a block
// with its lift form refused, requests in every row state, a timeline.
func taskForWords() TaskView {
	rows := []InvocationRow{
		{ID: "i1", Title: "Refund $42.10 on order 245695", State: StateBadgeView{Label: "awaiting approval"}, Why: "Refunds above $25 are decided by a person", Amount: "$42.10", Pending: true, CannotUndo: true},
		{ID: "i2", Title: "Change the address", State: StateBadgeView{Label: "result needs checking"}, Unverified: true, Reference: "ref-9"},
		{ID: "i3", Title: "Cancel the plan", State: StateBadgeView{Label: "completed"}, CanReverse: true},
		{ID: "i4", Title: "Resend the invoice", State: StateBadgeView{Label: "declined"}},
	}
	return TaskView{
		IsAdmin: true, CanLiftBlocks: true,
		Live: TaskLiveView{ID: "t1", Title: "Refund $42.10 on order 245695", CustomerRef: "jordan@example.com",
			ConversationID: "conv-7", State: StateBadgeView{Label: "running"}, Notice: "Paused by Ada Lovelace.",
			BudgetLeft: 3, WriteBudget: 5, InflightLimit: 2, RatePerMinute: 6, ExpiresAt: "May 2, 10:00 UTC",
			CanPause: true, CanResume: true, CanCancel: true, Invocations: rows,
			Timeline: []TimelineRow{{At: "09:01", AtISO: "2026-05-01T09:01:00Z", Actor: "Ada Lovelace", IdentifiedBy: "single sign-on", Sentence: "approved the refund."}}},
		Inspect: &InspectView{ID: "i2", Title: "Change the address", State: StateBadgeView{Label: "result needs checking"},
			Args:    []ArgCompare{{Label: "City", Proposed: "Springfield", Approved: "Springfield", Sent: "Shelbyville", Changed: true}},
			Created: "09:00", ApprovedAt: "09:01", Permit: "09:02", Finished: "09:03",
			Evidence: "The address reads Shelbyville.", Outlook: "Reconciling marks it completed.",
			Effects: []string{"The address changed."}, Unverified: true, Tech: []ArgField{{Key: "key", Label: "Idempotency key", Value: "k-1"}}},
		Blocks: []BlockRow{{System: "shop", TargetID: "245695", Action: "refund_order", Code: "over_limit", Message: "Refunds are capped.", Since: "09:04"}},
		Lift:   LiftBlockForm{System: "shop", TargetID: "245695", Reason: "checked", Errors: FieldErrors{"reason": "Say why it may be tried again."}},
	}
}

var taskData = []string{"Refund $42.10 on order 245695", "$42.10", "Refunds above $25 are decided by a person",
	"awaiting approval", "Change the address", "result needs checking", "ref-9", "Cancel the plan", "completed",
	"Resend the invoice", "declined", "jordan@example.com", "conv-7", "running", "Paused by Ada Lovelace.",
	"May 2, 10:00 UTC", "Ada Lovelace", "single sign-on", "approved the refund.", "City", "Springfield",
	"Shelbyville", "The address reads Shelbyville.", "Reconciling marks it completed.", "The address changed.",
	"Idempotency key", "k-1", "shop/245695", "refund_order", "over_limit", "Refunds are capped.", "checked",
	"Say why it may be tried again.", "Tasks", "t1", "Ada", "agent", "Enter", "Esc"}

// TestTheTaskPageComesFromTheCatalogue: the task page (controls, the
// global stop both ways, a refused block lift, every kind of request row,
// the timeline, an inspected call) and a task with no request yet write
// no text of their own: an installation's override of every console text
// shows, and nothing else.
func TestTheTaskPageComesFromTheCatalogue(t *testing.T) {
	installMarkedConsole(t)
	p := Page{Title: "Tasks", User: &User{Name: "Ada", RoleLabel: "agent"}, CSRF: "tok"}
	stopped, ended := taskForWords(), taskForWords()
	stopped.GlobalStopped = true
	ended.Live.CanPause, ended.Live.CanResume, ended.Live.CanCancel, ended.Live.Title = false, false, false, ""
	ended.Inspect = nil
	for name, c := range map[string]templ.Component{
		"task":            Task(p, taskForWords()),
		"stopped":         Task(p, stopped),
		"ended, no title": Task(p, ended),
	} {
		_, html := renderDoc(t, c)
		if strays := consoleStrays(html, taskData...); len(strays) > 0 {
			t.Errorf("%s writes text of its own:\n%s", name, strings.Join(strays, "\n"))
		}
	}
}
